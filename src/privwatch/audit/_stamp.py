"""The stamp of an audit: input file and its SHA-256, table size, privwatch version, date."""

from __future__ import annotations

import datetime as _dt
from importlib import metadata
from pathlib import Path
from typing import Any

from .._files import file_sha256

__all__ = ["file_sha256", "make_stamp", "privwatch_version"]


def privwatch_version() -> str:
    """The installed privwatch version (``0+unknown`` when run from an uninstalled tree)."""
    try:
        return metadata.version("privwatch")
    except metadata.PackageNotFoundError:  # pragma: no cover - always installed in practice
        return "0+unknown"


def make_stamp(source: str | Path | None, n_rows: int, n_columns: int) -> dict[str, Any]:
    """What an auditor needs to tie a report to its input: file name and hash (when the input
    was a file), row and column counts of the input table, privwatch version and the date."""
    stamp: dict[str, Any] = {
        "input_name": None,
        "input_sha256": None,
        "input_rows": int(n_rows),
        "input_columns": int(n_columns),
        "privwatch_version": privwatch_version(),
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if source is not None:
        p = Path(source)
        stamp["input_name"] = p.name
        if p.is_file():
            stamp["input_sha256"] = file_sha256(p)
    return stamp
