"""Reading user tables for the CLI, with one-line errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..exceptions import ValidationError

__all__ = ["read_table"]


def read_table(path: Path) -> pd.DataFrame:
    """Read a CSV (optionally compressed) or Parquet file into a DataFrame."""
    if not path.exists():
        raise ValidationError(f"DATA must be an existing file; got {str(path)!r} (not found).")
    if path.is_dir():
        raise ValidationError(f"DATA must be a file; got the directory {str(path)!r}.")
    try:
        if path.suffix.lower() in {".parquet", ".pq"}:
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (
        UnicodeDecodeError,
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        ImportError,
        OSError,
        ValueError,
    ) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValidationError(
            f"DATA must be a readable CSV or Parquet file; got {str(path)!r} ({first})."
        ) from None
