r"""Numeric columns binned in the engine (their cut points come from the value counts of
:mod:`privwatch.engines._value_counts`).

A column binned with increasing cut points :math:`e_1 < \dots < e_k` is replaced, in the
engine, by its bin's code

.. math:: b(v) = |\{j : e_j \le v\}| \in \{0, \dots, k\}, \qquad b(\mathrm{missing}) =
   \mathrm{missing},

the bins :math:`(-\infty, e_1), [e_1, e_2), \dots, [e_k, \infty)` of
:func:`privwatch.preprocessing.bin_columns` (``searchsorted(edges, v, side="right")``), as a
narwhals expression (pandas, Polars, DuckDB, Spark) or a SQL ``CASE`` (DuckDB files, databases).
Only the small count table (or mapping) goes between codes and the labels of
:func:`~privwatch.preprocessing.interval_labels`; no record passes through Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..preprocessing import interval_labels

__all__ = [
    "Bins",
    "bin_frame",
    "bin_sql",
    "codes_to_labels",
    "labels_to_codes",
]

#: Column -> increasing finite cut points.
Bins = Mapping[str, Sequence[float]]


def check_bins(bins: Bins | None, keys: Sequence[str]) -> dict[str, list[float]]:
    """``bins`` of key columns as lists of floats (strictly increasing, finite)."""
    out: dict[str, list[float]] = {}
    for col, edges in (bins or {}).items():
        if col not in keys:
            raise ValidationError(f"`bins` names {col!r}, which is not a key column {list(keys)}.")
        if isinstance(edges, (int, np.integer)):
            raise ValidationError(
                f"`bins[{col!r}]` must be cut points in an engine (quantiles resolved first); "
                f"got {edges!r}."
            )
        interval_labels(edges)  # checks: finite, strictly increasing, non-empty
        out[col] = [float(e) for e in edges]
    return out


def bin_sql(column: str, edges: Sequence[float]) -> str:
    """The bin code of the SQL column expression ``column`` (NULL stays NULL)."""
    whens = " ".join(f"WHEN {column} < {float(e)!r} THEN {j}" for j, e in enumerate(edges))
    return f"CASE WHEN {column} IS NULL THEN NULL {whens} ELSE {len(edges)} END"


def _bin_expr(col: str, edges: Sequence[float]) -> Any:
    code = nw.sum_horizontal(*((nw.col(col) >= float(e)).cast(nw.Int64) for e in edges))
    return nw.when(~nw.col(col).is_null()).then(code).alias(col)


def bin_frame(frame: Any, bins: Bins) -> Any:
    """A narwhals frame with each binned column replaced by its bin code."""
    if not bins:
        return frame
    return frame.with_columns(*(_bin_expr(c, e) for c, e in bins.items()))


def codes_to_labels(table: pd.DataFrame, bins: Bins) -> pd.DataFrame:
    """A small table (count table, distinct tuples) with each binned column's codes replaced
    by its interval labels (object column, None where missing)."""
    out = table.copy()
    for col, edges in bins.items():
        labels = np.array(interval_labels(edges), dtype=object)
        values = pd.to_numeric(out[col], errors="coerce")
        present = values.notna().to_numpy()
        text = np.full(len(out), None, dtype=object)
        text[present] = labels[values.to_numpy()[present].astype(np.int64)]
        out[col] = text
    return out


def labels_to_codes(mapping: pd.DataFrame, bins: Bins) -> pd.DataFrame:
    """A mapping keyed by interval labels re-keyed by bin codes (for the join in the engine);
    a label that is not a bin of the cut points is refused."""
    out = mapping.copy()
    for col, edges in bins.items():
        code_of = {label: j for j, label in enumerate(interval_labels(edges))}
        present = out[col].notna()
        unknown = sorted({str(v) for v in out.loc[present, col] if v not in code_of})
        if unknown:
            raise ValidationError(
                f"the mapping's {col!r} holds {unknown[:3]}, which are not bins of {list(edges)}."
            )
        codes = out[col].map(code_of).where(present)
        out[col] = pd.Series(codes, index=out.index).astype("Int64")
    return out
