"""Which engine reads a source, and how: the one place that knows the engines' native types."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import ValidationError

__all__ = [
    "AUTO_THRESHOLD_BYTES",
    "AUTO_THRESHOLD_ROWS",
    "DUCKDB_MEMORY_LIMIT",
    "ENGINES",
    "Source",
    "choose_engine",
    "duckdb_connect",
    "require",
    "resolve",
]

ENGINES = ("pandas", "polars", "duckdb", "spark", "sql")
#: engine="auto" reads files whose total size is above this with DuckDB, below with pandas.
AUTO_THRESHOLD_BYTES = 64 * 2**20
#: ... and Parquet files holding more records than this (their footers say how many) with
#: DuckDB too: a compressed file of integer codes is small on disk but not in pandas (issue #42:
#: 5,000,000 rows in 51 MiB took pandas 90 s and 3.25 GiB, DuckDB 19 s).
AUTO_THRESHOLD_ROWS = 1_000_000

#: Memory DuckDB may use before it spills to disk (``PRIVWATCH_DUCKDB_MEMORY_LIMIT`` overrides;
#: DuckDB's own default is 80 % of the machine's memory).
DUCKDB_MEMORY_LIMIT = "2GB"

_EXTRA = {
    "polars": "lake",
    "duckdb": "lake",
    "pyspark": "spark",
    "sqlalchemy": "postgres",
    "psycopg": "postgres",
    "openpyxl": "excel",
}


def require(module: str) -> Any:
    """Import an optional dependency or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        if top == "pyarrow":  # a dependency of privwatch itself, not of an extra
            raise ImportError(
                f"{module} is needed here (a dependency of privwatch that is missing); "
                "install it with `pip install pyarrow`."
            ) from exc
        extra = _EXTRA.get(top, "lake")
        raise ImportError(
            f"{module} is needed here; install it with `pip install 'privwatch[{extra}]'`."
        ) from exc


def duckdb_connect(database: str = ":memory:", read_only: bool = False) -> Any:
    """A DuckDB connection bounded to :data:`DUCKDB_MEMORY_LIMIT`, spilling to the temp dir."""
    import tempfile

    duckdb = require("duckdb")
    config = {
        "memory_limit": os.environ.get("PRIVWATCH_DUCKDB_MEMORY_LIMIT", DUCKDB_MEMORY_LIMIT),
        "temp_directory": os.path.join(tempfile.gettempdir(), "privwatch-duckdb"),
    }
    return duckdb.connect(database, read_only=read_only, config=config)


@dataclass(frozen=True)
class Source:
    """A resolved source: ``kind`` is "frame", "files" or "url"; ``engine`` the one that runs."""

    kind: str
    engine: str
    obj: Any
    files: tuple[str, ...] = ()
    table: str | None = None
    reason: str = ""


def parquet_rows(files: Sequence[str]) -> int | None:
    """The number of records of Parquet files, from their footers (None: not all Parquet, or
    a footer that cannot be read: the size decides alone)."""
    if not files or not all(f.endswith(".parquet") for f in files):
        return None
    try:
        pq = require("pyarrow.parquet")
        return sum(int(pq.read_metadata(f).num_rows) for f in files)
    except (OSError, ValueError, ImportError):
        return None


def parquet_distinct_bounds(files: Sequence[str], columns: Sequence[str]) -> dict[str, int]:
    """An upper bound on each integer column's number of distinct values in Parquet files, from
    their footers' statistics (no pass over the records): ``max - min + 1`` over every row
    group, one more when a value may be missing (as a count of distinct values with the
    missing one). A column is left out where it is not an integer, a row group has no
    min/max, or a file is not a local Parquet file or cannot be read."""
    if not files or not all(f.endswith(".parquet") and os.path.isfile(f) for f in files):
        return {}
    lo: dict[str, int] = {}
    hi: dict[str, int] = {}
    nulls: dict[str, bool] = {}
    bad: set[str] = set()
    try:
        pq = require("pyarrow.parquet")
        pa = require("pyarrow")
        for f in files:
            meta = pq.read_metadata(f)
            schema = meta.schema.to_arrow_schema()
            at = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
            for c in columns:
                if (
                    c not in at
                    or c not in schema.names
                    or not pa.types.is_integer(schema.field(c).type)
                ):
                    bad.add(c)
                    continue
                for g in range(meta.num_row_groups):
                    st = meta.row_group(g).column(at[c]).statistics
                    if st is None or not st.has_min_max:
                        bad.add(c)
                        break
                    lo[c] = min(lo.get(c, int(st.min)), int(st.min))
                    hi[c] = max(hi.get(c, int(st.max)), int(st.max))
                    may_miss = not st.has_null_count or st.null_count > 0
                    nulls[c] = nulls.get(c, False) or may_miss
    except (OSError, ValueError, ImportError):
        return {}
    return {c: hi[c] - lo[c] + 1 + int(nulls[c]) for c in columns if c in lo and c not in bad}


def _native_engine(obj: Any) -> str | None:
    mod = type(obj).__module__.split(".")[0]
    return {"pandas": "pandas", "polars": "polars", "duckdb": "duckdb", "pyspark": "spark"}.get(mod)


def resolve(source: Any, engine: str, table: str | None) -> Source:
    if engine not in (*ENGINES, "auto"):
        raise ValidationError(f"`engine` must be one of {('auto', *ENGINES)}; got {engine!r}.")
    if isinstance(source, str | os.PathLike) and "://" in str(source):
        url = str(source)
        if not table:
            raise ValidationError("`table` must name a table when `source` is a database URL.")
        eng = "duckdb" if url.startswith("duckdb://") else "sql"
        if engine not in ("auto", eng):
            raise ValidationError(
                f"`engine` must be 'auto' or {eng!r} for a {url.split(':')[0]} URL; got {engine!r}."
            )
        return Source("url", eng, url, table=table, reason="database URL: counted in the database")
    if isinstance(source, str | os.PathLike):
        pattern = str(source)
        files = (
            tuple(sorted(glob.glob(pattern)))
            if any(c in pattern for c in "*?[")
            else ((pattern,) if Path(pattern).exists() else ())
        )
        if not files:
            raise ValidationError(
                f"`source` must name existing files; got {pattern!r} (not found: no file "
                "matches it)."
            )
        if engine != "auto":
            return Source("files", engine, None, files=files, reason=f"engine={engine} requested")
        size = sum(os.path.getsize(f) for f in files)
        big = size > AUTO_THRESHOLD_BYTES
        rows = None if big else parquet_rows(files)
        many = rows is not None and rows > AUTO_THRESHOLD_ROWS
        chosen = "duckdb" if big or many else "pandas"
        reason = (
            f"auto: {size / 2**20:.1f} MiB {'>' if big else '<='} "
            f"{AUTO_THRESHOLD_BYTES / 2**20:.0f} MiB threshold -> {chosen}"
        )
        if many:
            reason = (
                f"auto: {rows:,} Parquet rows > {AUTO_THRESHOLD_ROWS:,} row threshold "
                f"({size / 2**20:.1f} MiB) -> {chosen}"
            )
        return Source("files", chosen, None, files=files, reason=reason)
    native = _native_engine(source)
    if native is None:
        raise ValidationError(
            "`source` must be a pandas/Polars/DuckDB/Spark frame, a file path or glob, or a "
            f"database URL; got {type(source).__name__}."
        )
    if engine in ("auto", native):
        return Source("frame", native, source, reason=f"{native} frame")
    raise ValidationError(
        f"`engine` must be 'auto' or {native!r} for a {native} frame; got {engine!r}."
    )


def choose_engine(source: Any, engine: str = "auto", table: str | None = None) -> tuple[str, str]:
    """The engine that would read ``source`` and why, without reading it.

    Returns ``(engine, reason)``: for ``engine="auto"`` a frame's own engine, for files pandas
    up to :data:`AUTO_THRESHOLD_BYTES` and :data:`AUTO_THRESHOLD_ROWS` Parquet rows and DuckDB
    above either, "sql" for a database URL ("duckdb" for ``duckdb:///file.db``).

    Examples
    --------
    >>> import pandas as pd
    >>> choose_engine(pd.DataFrame({"a": [1]}))
    ('pandas', 'pandas frame')
    """
    src = resolve(source, engine, table if table is not None else "?")
    return src.engine, src.reason


#: The column of each record's row position that privwatch adds.
ROW = "privwatch_row"


def check_row_free(columns: Sequence[str], with_row: bool = True) -> None:
    """Refuse a source that has a column named :data:`ROW` itself (it would be ambiguous)."""
    if with_row and ROW in list(columns):
        raise ValidationError(
            f"`source` must not have a column named {ROW!r}: privwatch adds it (each record's "
            "row position); rename that column."
        )
