"""What the columns page shows of a table: the first rows, and for each column its type,
distinct count and missing share, with a suggestion (drop an identifier, a quasi-identifier
candidate, bin a numeric column)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..preprocessing import DEFAULT_MAX_LEVELS

__all__ = ["PREVIEW_ROWS", "profile", "suggestion"]

#: Rows shown in the preview.
PREVIEW_ROWS = 8
#: A column with at least this share of distinct values reads as an identifier.
ID_SHARE = 0.9


def suggestion(series: pd.Series, distinct: int) -> str:
    """``drop`` (identifier-like), ``bin`` (numeric with more than the plug-in's
    ``DEFAULT_MAX_LEVELS`` values), ``quasi-identifier`` (a few values) or ``''``."""
    n = max(int(series.notna().sum()), 1)
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if n > 20 and distinct / n >= ID_SHARE:
        return "drop"
    if numeric and distinct > DEFAULT_MAX_LEVELS:
        return "bin"
    if 2 <= distinct <= DEFAULT_MAX_LEVELS:
        return "quasi-identifier"
    return ""


def profile(df: pd.DataFrame) -> dict[str, Any]:
    """The preview rows (as text) and one summary per column."""
    columns = []
    for name in df.columns:
        series = df[name]
        distinct = int(series.nunique(dropna=True))
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        columns.append(
            {
                "name": str(name),
                "type": "number" if numeric else "text",
                "distinct": distinct,
                "missing": float(series.isna().mean()) if len(series) else 0.0,
                "suggestion": suggestion(series, distinct),
            }
        )
    head = df.head(PREVIEW_ROWS).astype(str).to_numpy().tolist()
    return {"n_rows": len(df), "columns": columns, "preview": head}
