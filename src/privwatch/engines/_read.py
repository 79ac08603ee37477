"""Small tables from files into pandas: CSV (sniffed), Excel, Parquet, JSON Lines."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from ..exceptions import ValidationError
from ._sources import require

__all__ = ["read_table"]


def read_table(
    path: str | Path,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    sheet: str | int | None = None,
) -> pd.DataFrame:
    """Read a small table into pandas, by extension.

    ``.csv``/``.tsv``/``.txt`` (separator sniffed from the first 64 KiB unless ``sep`` is
    given), ``.xlsx`` (``sheet``: name or index, default the first; needs ``privwatch[excel]``),
    ``.parquet``, ``.jsonl``/``.ndjson``. Large data should stay in an engine
    (:func:`count_table`).

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); f = os.path.join(d, "t.csv")
    >>> _ = open(f, "w").write("a;b\\n1;x\\n2;y\\n")
    >>> read_table(f).shape
    (2, 2)
    """
    p = Path(path)
    if not p.exists():
        raise ValidationError(f"`path` must be an existing file; got {str(path)!r}.")
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(p)
    if suffix in (".jsonl", ".ndjson"):
        return pd.read_json(p, lines=True, encoding=encoding)
    if suffix in (".xlsx", ".xlsm"):
        require("openpyxl")
        return pd.read_excel(p, sheet_name=0 if sheet is None else sheet, engine="openpyxl")
    if suffix not in (".csv", ".tsv", ".txt", ".gz"):
        raise ValidationError(
            f"`path` must end in .csv, .tsv, .txt, .xlsx, .parquet or .jsonl; got {p.name!r}."
        )
    try:
        if sep is None:
            with open(p, encoding=encoding, newline="") as fh:
                head = fh.read(65536)
            try:
                sep = csv.Sniffer().sniff(head, delimiters=",;\t|").delimiter
            except csv.Error:
                sep = "\t" if suffix == ".tsv" else ","
        return pd.read_csv(p, sep=sep, encoding=encoding)
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"{p.name} is not valid {encoding} (byte {exc.start}); pass the file's `encoding`, "
            "e.g. encoding='latin-1'."
        ) from None
