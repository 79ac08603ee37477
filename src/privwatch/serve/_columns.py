"""What the columns page shows of a table: the first rows, and for each column its type,
distinct count and missing share, with a suggestion (drop an identifier, a quasi-identifier
candidate, bin a numeric column)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..exceptions import PrivwatchError
from ..preprocessing import DEFAULT_MAX_LEVELS, bin_columns
from ..release.hierarchies import auto_hierarchy

__all__ = ["PREVIEW_ROWS", "levels", "profile", "suggestion"]

#: Rows shown in the preview.
PREVIEW_ROWS = 8
#: Labels shown per level of a hierarchy's preview.
LEVEL_LABELS = 6
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


def levels(series: pd.Series, column: str, bins: Any = None) -> list[list[str]]:
    """The preview of the hierarchy the audit builds for ``column`` from the data
    (:func:`privwatch.release.hierarchies.auto_hierarchy`, after ``bins`` if given): per level,
    its first distinct labels. Empty when none can be built."""
    try:
        if bins is not None:
            series = bin_columns(series.to_frame(column), {column: bins})[column]
        hierarchy = auto_hierarchy(series.dropna(), column)
    except (PrivwatchError, ValueError, TypeError):
        return []
    return [
        list(dict.fromkeys(row))[:LEVEL_LABELS] for row in [hierarchy.values, *hierarchy.labels[1:]]
    ]
