"""Which classes of a lattice node to suppress so that the merged suppressed cell meets epsilon
too (:func:`choose_suppression`; the search of :mod:`~._global_recoding` calls it for
every node)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..cells import LiftBox, entropy_of_sizes, entropy_terms, row_sums

__all__ = ["choose_suppression"]

FloatArray = NDArray[np.float64]


def _merge_cost(a: FloatArray, b: float, n: float) -> FloatArray:
    """Entropy lost by merging cells of sizes ``a`` into one of size ``b`` (all out of ``n``)."""

    b_arr = np.asarray(b, dtype=float)
    return np.asarray(
        entropy_terms(a, n) + entropy_terms(b_arr, n) - entropy_terms(a + b_arr, n), dtype=float
    )


def choose_suppression(
    ct: FloatArray,
    box: LiftBox,
    budget: float,
    n: float,
    forced: np.ndarray | None = None,
    breaks: np.ndarray | None = None,
) -> np.ndarray | None:
    """Which classes to suppress: those breaking epsilon and the ``forced`` ones (released as
    ``*`` already, or below the minimum class size), plus safe ones until the merged cell meets
    epsilon (two greedy orders, the better kept); None when the limit cannot be met.
    ``breaks``: ``box.breaks(ct)`` when the caller has it already."""
    broken = box.breaks(ct) if breaks is None else breaks
    bad = broken if forced is None else broken | forced
    sizes = row_sums(ct)
    if sizes[bad].sum() > budget + 1e-9:
        return None
    best: np.ndarray | None = None
    best_cost = np.inf
    for per_entropy in (True, False):
        sup: np.ndarray | None = bad.copy()
        assert sup is not None
        merged = ct[sup].sum(0)
        while merged.sum() > 0 and box.violation(merged[None])[0] > 1e-12:
            room = budget - merged.sum()
            cand = np.flatnonzero(~sup & (sizes <= room + 1e-9) & (sizes > 0))
            if cand.size == 0:
                sup = None
                break
            now = box.violation(merged[None])[0]
            gain = now - box.violation(merged[None] + ct[cand])
            cost = _merge_cost(sizes[cand], float(merged.sum()), n) if per_entropy else sizes[cand]
            score = np.where(gain > 1e-15, gain / np.maximum(cost, 1e-300), -np.inf)
            pick = int(np.argmax(score))
            if not np.isfinite(score[pick]):
                sup = None
                break
            sup[cand[pick]] = True
            merged = merged + ct[cand[pick]]
        if sup is None:
            continue
        keep = sizes[~sup]
        cost_total = -entropy_of_sizes(np.append(keep, sizes[sup].sum()), n)
        if cost_total < best_cost:
            best, best_cost = sup, cost_total
    return best
