"""The folded count on pandas and Polars: one group-by over the keys, a count per fold.

Like DuckDB's (``count(*) FILTER (WHERE fold = k)``), the count comes back wide: one row per
key tuple, one count column per fold, so the table the driver sorts and converts has a fifth of
the rows of grouping by the fold too (the conversion to Python scalars cost as much as the
count at 10 million rows); :func:`privwatch.engines._count._expand_folds` then gives the same
``(keys, fold, count)`` rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._folds import fold_expr, fold_of
from ._sources import require

__all__ = ["pandas_folded", "polars_folded"]


def pandas_folded(
    df: pd.DataFrame, keys: list[str], row: str, folds: int, seed: int, wide: str
) -> pd.DataFrame:
    """Group codes from one pandas group-by (missing keys kept as groups), folds from NumPy,
    counts from one ``bincount`` of ``code * folds + fold``."""
    codes = df.groupby(keys, dropna=False, sort=False, observed=True).ngroup().to_numpy(np.int64)
    groups = int(codes.max()) + 1 if len(codes) else 0
    fold = fold_of(df[row].to_numpy(np.int64), folds, seed)
    table = np.bincount(codes * folds + fold, minlength=groups * folds).reshape(groups, folds)
    first = np.empty(groups, dtype=np.int64)  # each group's first record: its key values
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    out = df[keys].iloc[first].reset_index(drop=True)
    for k in range(folds):
        out[f"{wide}{k}"] = table[:, k].astype(np.int64)
    out["count"] = table.sum(axis=1).astype(np.int64)
    return out


def polars_folded(
    frame: Any, keys: list[str], row: str, folds: int, seed: int, wide: str
) -> pd.DataFrame:
    """One lazy Polars group-by with ``(fold == k).sum()`` per fold (streamed from files)."""
    pl = require("polars")
    lazy = frame.lazy()
    fold = fold_expr(pl.col(row), folds, seed).alias(wide)
    per_fold = [(pl.col(wide) == k).sum().cast(pl.Int64).alias(f"{wide}{k}") for k in range(folds)]
    counted = (
        lazy.with_columns(fold)
        .group_by(keys)
        .agg(*per_fold, pl.len().cast(pl.Int64).alias("count"))
    )
    out: pd.DataFrame = counted.collect().to_pandas()
    return out
