"""Small tables from files into pandas (CSV, Excel, Parquet, JSON Lines); Parquet in batches."""

from __future__ import annotations

import csv
import gzip
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from ..exceptions import ValidationError
from ._sources import require

__all__ = ["iter_batches", "read_table"]


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
    if not isinstance(path, (str, os.PathLike)):
        raise ValidationError(f"`path` must be a file path; got {type(path).__name__}.")
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
            opener = gzip.open if suffix == ".gz" else open
            with opener(p, "rt", encoding=encoding, newline="") as fh:
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


def iter_batches(
    source: str | Path,
    columns: Sequence[str] | None = None,
    *,
    batch_size: int = 65_536,
) -> Iterator[pd.DataFrame]:
    """Stream the records of a Parquet file or glob as pandas frames of ``batch_size`` rows.

    Files in name order, rows in file order; only one batch (one Parquet row group's worth at
    most) is in memory at a time, so a model trained on the batches (e.g. a neural lift
    estimator) needs memory that does not grow with the table. Built on
    ``pyarrow.parquet.ParquetFile.iter_batches``.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pd.DataFrame({"a": range(5), "b": list("vwxyz")}).to_parquet(f)
    >>> [len(b) for b in iter_batches(f, ["a"], batch_size=2)]
    [2, 2, 1]
    """
    import glob

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValidationError(f"`batch_size` must be a positive integer; got {batch_size!r}.")
    pattern = str(source)
    files = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
    files = [f for f in files if Path(f).is_file()]
    if not files:
        raise ValidationError(f"`source` must name existing Parquet files; got {pattern!r}.")
    pq = require("pyarrow.parquet")
    for f in files:
        reader = pq.ParquetFile(f)
        cols = None if columns is None else list(columns)
        if cols is not None:
            absent = [c for c in cols if c not in reader.schema_arrow.names]
            if absent:
                raise ValidationError(
                    f"`columns` must be columns of {f!r}; got {absent} "
                    f"(it has {reader.schema_arrow.names})."
                )
        for batch in reader.iter_batches(batch_size=batch_size, columns=cols):
            yield batch.to_pandas()
