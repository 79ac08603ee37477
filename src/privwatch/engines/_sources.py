"""Which engine reads a source, and how: the one place that knows the engines' native types."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AUTO_THRESHOLD_BYTES", "ENGINES", "Source", "require", "resolve"]

ENGINES = ("pandas", "polars", "duckdb", "spark", "sql")
#: engine="auto" reads files whose total size is above this with DuckDB, below with pandas.
AUTO_THRESHOLD_BYTES = 64 * 2**20

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
        extra = _EXTRA.get(module.split(".")[0], "lake")
        raise ImportError(
            f"{module} is needed here; install it with `pip install 'privwatch[{extra}]'`."
        ) from exc


@dataclass(frozen=True)
class Source:
    """A resolved source: ``kind`` is "frame", "files" or "url"; ``engine`` the one that runs."""

    kind: str
    engine: str
    obj: Any
    files: tuple[str, ...] = ()
    table: str | None = None
    reason: str = ""


def _native_engine(obj: Any) -> str | None:
    mod = type(obj).__module__.split(".")[0]
    return {"pandas": "pandas", "polars": "polars", "duckdb": "duckdb", "pyspark": "spark"}.get(mod)


def resolve(source: Any, engine: str, table: str | None) -> Source:
    if engine not in (*ENGINES, "auto"):
        raise ValueError(f"`engine` must be one of {('auto', *ENGINES)}; got {engine!r}.")
    if isinstance(source, str | os.PathLike) and "://" in str(source):
        url = str(source)
        if not table:
            raise ValueError("`table` must name a table when `source` is a database URL.")
        eng = "duckdb" if url.startswith("duckdb://") else "sql"
        if engine not in ("auto", eng):
            raise ValueError(f"`engine` must be 'auto' or {eng!r} for the URL {url.split(':')[0]}")
        return Source("url", eng, url, table=table, reason="database URL: counted in the database")
    if isinstance(source, str | os.PathLike):
        pattern = str(source)
        files = (
            tuple(sorted(glob.glob(pattern)))
            if any(c in pattern for c in "*?[")
            else ((pattern,) if Path(pattern).exists() else ())
        )
        if not files:
            raise FileNotFoundError(f"`source` matches no file; got {pattern!r}.")
        if engine != "auto":
            return Source("files", engine, None, files=files, reason=f"engine={engine} requested")
        size = sum(os.path.getsize(f) for f in files)
        big = size > AUTO_THRESHOLD_BYTES
        chosen = "duckdb" if big else "pandas"
        reason = (
            f"auto: {size / 2**20:.1f} MiB {'>' if big else '<='} "
            f"{AUTO_THRESHOLD_BYTES / 2**20:.0f} MiB threshold -> {chosen}"
        )
        return Source("files", chosen, None, files=files, reason=reason)
    native = _native_engine(source)
    if native is None:
        raise TypeError(
            "`source` must be a pandas/Polars/DuckDB/Spark frame, a file path or glob, or a "
            f"database URL; got {type(source).__name__}."
        )
    if engine in ("auto", native):
        return Source("frame", native, source, reason=f"{native} frame")
    raise ValueError(f"`engine` must be 'auto' or {native!r} for a {native} frame; got {engine!r}.")
