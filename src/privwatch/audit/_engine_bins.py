r"""The engine route's bins: the in-memory route's cut points, from value counts in the engine.

``bins`` ``col=k`` (``k`` quantile bins) and the automatic nested intervals of a many-valued
numeric column (:func:`privwatch.audit._prepare.resolve_columns` on the records) need the
column's distribution; on the engine route it comes from one group-by per column
(:func:`privwatch.engines.value_counts`: each distinct value and its count, over the records
the missing-value policy keeps), and the cut points computed from it are those of the records:

- ``k`` quantile bins: the linear-interpolation quantiles of ``numpy.quantile`` (Hyndman and
  Fan's definition 7), :math:`Q(q) = x_{(\lfloor h \rfloor)} + \gamma\,(x_{(\lfloor h
  \rfloor + 1)} - x_{(\lfloor h \rfloor)})`, :math:`h = (n - 1) q`, :math:`\gamma = h -
  \lfloor h \rfloor`, with the order statistics :math:`x_{(i)}` read from the cumulative
  counts (and numpy's rounding: :func:`_quantiles`);
- nested intervals: :func:`privwatch.release.hierarchies.nested_intervals` weighted by the
  counts (its cut points are weighted quantiles, so the counts give the records' own).

The columns are then binned in the engine (``engines.count_table(..., bins=...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import engines
from .._memory import BYTES_PER_QUANTILE_BIN, check_size
from ..exceptions import ValidationError
from ..release import Hierarchy
from ..release.hierarchies import nested_intervals
from ._spec import AuditSpec

__all__ = ["resolve_engine_bins"]


def _quantiles(values: np.ndarray, counts: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``numpy.quantile(np.repeat(values, counts), qs)`` (method "linear") without repeating:
    ``values`` increasing, ``counts`` positive."""
    n = int(counts.sum())
    h = (n - 1) * qs
    prev = np.floor(h)
    gamma = h - prev
    lo = np.clip(prev.astype(np.int64), 0, n - 1)
    hi = np.clip(lo + 1, 0, n - 1)
    top = h >= n - 1
    lo, hi = np.where(top, n - 1, lo), np.where(top, n - 1, hi)
    cum = np.cumsum(counts)
    a = values[np.searchsorted(cum, lo, side="right")]
    b = values[np.searchsorted(cum, hi, side="right")]
    diff = b - a
    out: np.ndarray = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    return out


def _record_number(vc: pd.DataFrame) -> bool:
    """Integers with a distinct value in every record (as ``_prepare._record_number``)."""
    counts, values = vc["count"].to_numpy(), vc["value"].to_numpy()
    return (
        int(counts.sum()) > 20
        and bool(np.all(counts == 1))
        and bool(np.all(np.mod(values, 1) == 0))
    )


def resolve_engine_bins(
    spec: AuditSpec, source: Any, engine: str, sensitive: Sequence[str], observed: Sequence[str]
) -> tuple[dict[str, list[float]], dict[str, str | Path | Hierarchy]]:
    """``(bins, hierarchies)`` of an engine audit, as the in-memory route resolves them on the
    records: ``bins`` of observed columns as cut points (``col=k``: the quantiles of the
    column), and every numeric observed column with more than ``spec.max_levels`` distinct
    values, no bins, no hierarchy and not a record number binned into nested quantile
    intervals (its cut points join ``bins``, its hierarchy ``hierarchies``)."""
    obs = list(observed)
    foreign = [c for c in spec.bins if c not in obs]
    if foreign:
        raise ValidationError(
            f"`bins` names {foreign}, which are not observed columns {obs}; on the engine route "
            "only observed columns are binned."
        )
    numeric = set(engines.numeric_columns(source, obs, engine=engine, table=spec.table))
    complete = [*sensitive, *obs] if spec.missing == "drop" else []

    def counts(col: str) -> pd.DataFrame:
        vc = engines.value_counts(source, col, complete=complete, engine=engine, table=spec.table)
        return vc

    bins: dict[str, list[float]] = {}
    for col, value in spec.bins.items():
        if col not in numeric:
            raise ValidationError(f"`bins[{col!r}]` needs a numeric column; {col!r} is not.")
        if not isinstance(value, (int, np.integer)):
            bins[col] = [float(e) for e in value]
            continue
        if isinstance(value, bool) or value < 2:
            raise ValidationError(f"`bins[{col!r}]` must be at least 2; got {value}.")
        check_size(f"bins[{col!r}]", (int(value) + 1) * BYTES_PER_QUANTILE_BIN)
        vc = counts(col)
        if not len(vc):
            raise ValidationError(f"`bins[{col!r}]` needs a column with values; {col!r} has none.")
        qs = np.linspace(0, 1, int(value) + 1)[1:-1]
        cuts = _quantiles(vc["value"].to_numpy(), vc["count"].to_numpy(), qs)
        bins[col] = [float(e) for e in np.unique(cuts)]
        if not bins[col]:
            del bins[col]  # one value: nothing to cut (the in-memory route keeps it as is)
    hierarchies: dict[str, str | Path | Hierarchy] = dict(spec.hierarchies)
    if spec.max_levels is None or spec.estimator != "plugin":
        return bins, hierarchies
    candidates = [
        c
        for c in obs
        if c not in spec.bins and c not in bins and c not in hierarchies and c in numeric
    ]  # one pass for all: only a column with many values needs its value counts
    many = engines.distinct_counts(
        source, candidates, complete=complete, engine=engine, table=spec.table,
        at_most=spec.max_levels,
    )  # fmt: skip
    for col in candidates:
        if many[col] <= spec.max_levels:
            continue
        vc = counts(col)
        if len(vc) <= spec.max_levels or (not spec.force and _record_number(vc)):
            continue
        series = pd.Series(vc["value"].to_numpy(), name=col)
        edges, hierarchy = nested_intervals(series, col, weights=vc["count"].to_numpy())
        bins[col], hierarchies[col] = edges, hierarchy
    return bins, hierarchies
