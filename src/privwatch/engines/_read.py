"""Small tables from files into pandas (CSV, Excel, Parquet, JSON Lines); Parquet in batches."""

from __future__ import annotations

import codecs
import csv
import gzip
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..exceptions import ValidationError
from ._sources import require

__all__ = ["iter_batches", "parquet_files", "read_table"]


#: Compressed text files (compression inferred from the name by pandas).
COMPRESSED = (".gz", ".bz2", ".zip", ".xz", ".zst")
#: What :func:`read_table` reads, for messages.
FORMATS = "CSV/TSV (optionally compressed), Excel (.xlsx), Parquet or JSON Lines (.jsonl)"
_HEAD = 1 << 16
#: The widest CSV header read: pandas parses a header of 50,000 columns in about a second, one of
#: 1,000,000 in minutes (superlinear), and a header that wide is almost always a wrong separator.
MAX_COLUMNS = 50_000
#: Characters of the first line read to count its columns.
_HEADER_CHARS = 1 << 24


def _kind(p: Path) -> str | None:
    """parquet, excel, jsonl or csv from the suffixes (a compression suffix looks through)."""
    suffixes = [s.lower() for s in p.suffixes]
    compressed = bool(suffixes) and suffixes[-1] in COMPRESSED
    last = (suffixes[-2] if len(suffixes) > 1 else "") if compressed else p.suffix.lower()
    if last in (".parquet", ".pq") and not compressed:
        return "parquet"
    if last in (".xlsx", ".xlsm") and not compressed:
        return "excel"
    if last in (".jsonl", ".ndjson"):
        return "jsonl"
    if last in (".csv", ".tsv", ".txt") or compressed:
        return "csv"
    return None


def _check_text(p: Path, encoding: str) -> None:
    """A NUL byte in the first 64 KiB of an uncompressed 8-bit text file: binary, or UTF-16."""
    if p.suffix.lower() in COMPRESSED or encoding.lower().replace("-", "").startswith(
        ("utf16", "utf32")
    ):
        return
    with p.open("rb") as fh:
        nul = fh.read(_HEAD).find(bytes(1))
    if nul >= 0:
        raise ValidationError(
            f"`path` must be a readable CSV or Parquet file; {str(p)!r} is not text: it holds a "
            f"NUL byte at offset {nul} (a binary file, or UTF-16: pass `encoding` 'utf-16')."
        )


def _open(p: Path, mode: str, **kwargs: Any) -> Any:
    """``open`` for a plain, gzip, bz2 or xz file (by its last suffix)."""
    import bz2
    import lzma

    openers: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
    return openers.get(p.suffix.lower(), open)(p, mode, **kwargs)


def _sniff(p: Path, encoding: str) -> str:
    """The separator of a CSV file, from its first 64 KiB (``,`` when unsure)."""
    if p.suffix.lower() in (".zip", ".zst"):
        return ","
    with _open(p, "rt", encoding=encoding, newline="") as fh:
        head = fh.read(_HEAD)
    try:
        return str(csv.Sniffer().sniff(head, delimiters=",;\t|").delimiter)
    except csv.Error:
        return "\t" if p.name.lower().endswith((".tsv", ".tsv.gz")) else ","


def _check_width(p: Path, sep: str, encoding: str) -> None:
    """Refuse a CSV file whose header has more than :data:`MAX_COLUMNS` columns, before pandas
    spends minutes parsing it (zip and zstd archives are not opened here)."""
    if p.suffix.lower() in (".zip", ".zst"):
        return
    try:
        with _open(p, "rt", encoding=encoding, newline="") as fh:
            line = fh.readline(_HEADER_CHARS)
        width = len(next(csv.reader([line], delimiter=sep), []))
    except (UnicodeDecodeError, csv.Error, OSError, EOFError):
        return  # the reader below reports these with the file's name and offset
    if width > MAX_COLUMNS:
        raise ValidationError(
            f"`path` must have at most {MAX_COLUMNS:,} columns; the header of {p.name} has "
            f"{width:,} (separator {sep!r}): check the separator (`sep`), or keep the columns "
            "you audit in a narrower file."
        )


def _bad_byte(p: Path, encoding: str) -> tuple[int, str] | None:
    """(offset, reason) of the first byte of the (decompressed) file ``encoding`` cannot decode
    (the parser's own offset counts from its buffer, not from the start of the file)."""
    if p.suffix.lower() in (".zip", ".zst"):
        return None
    decoder = codecs.getincrementaldecoder(encoding)()
    done = 0
    with _open(p, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                return done - pending + exc.start, exc.reason
            if not chunk:
                return None
            done += len(chunk)


def _checked_file(path: Any, encoding: str) -> tuple[Path, str]:
    """``path`` as an existing file of a kind :func:`read_table` reads, with that kind, after
    checking that ``encoding`` is one Python knows."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValidationError(f"`path` must be a file path; got {type(path).__name__}.")
    p = Path(path)
    if not p.exists():
        raise ValidationError(f"`path` must be an existing file; got {str(path)!r} (not found).")
    if p.is_dir():
        raise ValidationError(f"`path` must be a file; got the directory {str(path)!r}.")
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ValidationError(
            "`encoding` must be an encoding Python knows (utf-8, latin-1, cp1252, ...); got "
            f"{encoding!r}."
        ) from None
    kind = _kind(p)
    if kind is None:
        raise ValidationError(
            "`path` must end in .csv, .tsv, .txt, .xlsx, .parquet or .jsonl (text optionally "
            f"compressed: {', '.join(COMPRESSED)}); got {p.name!r}."
        )
    return p, kind


def read_table(
    path: str | Path,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    sheet: str | int | None = None,
) -> pd.DataFrame:
    """Read a small table into pandas, by extension (the one file reader of privwatch and its CLI).

    ``.csv``/``.tsv``/``.txt``, optionally compressed (``.gz``, ``.bz2``, ``.zip``, ``.xz``,
    ``.zst``; the separator is sniffed from the first 64 KiB unless ``sep`` is given),
    ``.xlsx`` (``sheet``: name or index, default the first; needs ``privwatch[excel]``),
    ``.parquet``, ``.jsonl``/``.ndjson``. ``encoding`` applies to the text formats. Large data
    should stay in an engine (:func:`count_table`).

    Raises
    ------
    ValidationError
        ``path`` is not an existing file of a known kind, ``encoding`` is unknown, the file is
        not text (a NUL byte: binary, or UTF-16 read as 8-bit), a byte cannot be decoded (the
        message names the encoding and the byte offset), an optional reader is not installed,
        or the parser refuses the content.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); f = os.path.join(d, "t.csv")
    >>> _ = open(f, "w").write("a;b\\n1;x\\n2;y\\n")
    >>> read_table(f).shape
    (2, 2)
    """
    if sep is not None and (not isinstance(sep, str) or len(sep) != 1 or sep in '\r\n"'):
        raise ValidationError(
            f"`sep` must be one character that separates the fields of a CSV line; got {sep!r}."
        )
    p, kind = _checked_file(path, encoding)
    if kind in ("csv", "jsonl"):
        _check_text(p, encoding)
    try:
        if kind == "parquet":
            return pd.read_parquet(p)
        if kind == "excel":
            require("openpyxl")
            return pd.read_excel(p, sheet_name=0 if sheet is None else sheet, engine="openpyxl")
        if kind == "jsonl":
            return pd.read_json(p, lines=True, encoding=encoding)
        sep = _sniff(p, encoding) if sep is None else sep
        _check_width(p, sep, encoding)
        return pd.read_csv(p, sep=sep, encoding=encoding)
    except ValidationError:
        raise
    except UnicodeDecodeError as exc:
        offset, reason = _bad_byte(p, encoding) or (exc.start, exc.reason)
        raise ValidationError(
            f"`path` must be a readable CSV or Parquet file in the encoding {encoding!r}; "
            f"{p.name} is not valid {encoding}: the encoding {encoding!r} cannot decode at offset "
            f"{offset} ({reason}): pass the file's `encoding`, e.g. "
            "'latin-1' or 'cp1252'."
        ) from None
    except ImportError as exc:
        raise ValidationError(f"reading {p.name!r} needs an optional package: {exc}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError, ValueError, KeyError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValidationError(
            f"`path` must be a readable CSV or Parquet file ({FORMATS}); got {str(path)!r} "
            f"({first})."
        ) from None


def parquet_files(source: str | Path) -> list[str]:
    """The files a Parquet path or glob names, in name order: the order in which
    :func:`iter_batches` (and the streamed neural fits) read, and number, the records.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for name in ("b.parquet", "a.parquet"):
    ...     pd.DataFrame({"a": [1]}).to_parquet(os.path.join(d, name))
    >>> [os.path.basename(f) for f in parquet_files(os.path.join(d, "*.parquet"))]
    ['a.parquet', 'b.parquet']
    """
    import glob

    pattern = str(source)
    files = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
    files = [f for f in files if Path(f).is_file()]
    if not files:
        raise ValidationError(f"`source` must name existing Parquet files; got {pattern!r}.")
    return files


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
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValidationError(f"`batch_size` must be a positive integer; got {batch_size!r}.")
    files = parquet_files(source)
    pq = require("pyarrow.parquet")
    for f in files:
        # pre_buffer=False: the default pre-buffers every column chunk of the file, so the
        # memory would grow with the table (298 MiB held for a 296 MiB file)
        reader = pq.ParquetFile(f, pre_buffer=False)
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
