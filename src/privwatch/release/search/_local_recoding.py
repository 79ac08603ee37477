"""Local recoding: equivalence classes generalised independently (top-down, Mondrian-style).

Starting from partitions of the records that already meet epsilon (the best global release's
classes and its suppressed cell, or all records as one ``*`` cell), each partition is specialised
one hierarchy level on the column that gains the most information. The children that meet epsilon
become partitions of their own; the ones that do not stay together at the parent's level, and
the split is taken only when that remainder meets epsilon too. Every released cell therefore meets
epsilon at every step; cells that end with the same labels merge, and a merge of cells inside the
lift box stays inside it (the box is convex), so the whole release meets epsilon. Tuples without
a fitted record never form a cell of their own: they stay in the remainder.

With a minimum class size K, a child is valid only with at least K records, and a remainder only
with K records or when it is released as ``*`` in every column (the suppressed cell, exempt);
merging cells only makes them larger, so every released cell but the suppressed one holds K.
The rows left as ``*`` in every column are suppressed records, and
:class:`~._one_search.Fitter` keeps a refinement only when they stay within
``max_suppressed``.

All partitions are split in the same round, vectorised over the tuple rows (one group-by per
column and round), so the cost is a few passes over the count table per level of the hierarchies.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..cells import LiftBox, cell_counts, entropy_terms, group_rows
from ._global_recoding import Plan, ReleaseSpace, cell_information
from ._options import MIN_CLASS_SIZE

__all__ = ["refine_locally"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def _best_splits(
    space: ReleaseSpace,
    part: IntArray,
    n_parts: int,
    levels: IntArray,
    done: np.ndarray,
    counts: FloatArray,
    box: LiftBox,
    total: float,
    min_class_size: int,
) -> tuple[FloatArray, IntArray, list[np.ndarray]]:
    """Per partition: the best gain, its column (-1: none) and, per column, which rows go to a
    valid child (one that meets epsilon and holds ``min_class_size`` records)."""
    m = levels.shape[1]
    least = min_class_size - 1e-9 if min_class_size > 1 else 0.0
    # a remainder released as '*' everywhere is the suppressed cell: no minimum size
    exempt = np.ones(n_parts, dtype=bool)
    if min_class_size > 1:
        exempt = cell_counts(part, n_parts, space.all_star(levels).astype(float)) > 0
    before = cell_information(space, part, n_parts, counts, total)
    best_gain = np.zeros(n_parts)
    best_col = np.full(n_parts, -1, dtype=np.int64)
    to_child: list[np.ndarray] = []
    for j in range(m):
        finer = levels[:, j] - 1
        ok_row = (finer >= 0) & ~done[:, j]
        label = np.where(ok_row, space.tables[j][np.maximum(finer, 0), space.table.codes[:, j]], -1)
        child, n_child = group_rows(np.stack([part, label], axis=1))
        ct = cell_counts(child, n_child, counts)
        size = ct.sum(1)
        child_ok = cell_counts(child, n_child, ok_row.astype(float)) > 0
        valid = child_ok & (size > 0) & (size >= least) & ~box.breaks(ct)
        row_valid = valid[child]
        to_child.append(row_valid)
        rest = cell_counts(part, n_parts, counts * ~row_valid[:, None])
        rest_size = rest.sum(1)
        rest_ok = (rest_size <= 0) | (~box.breaks(rest) & ((rest_size >= least) | exempt))
        any_valid = cell_counts(part, n_parts, row_valid.astype(float)) > 0
        # after: valid children apart, the remainder as one cell
        if space.table.useful is None:  # entropy terms of the cell sizes, directly
            after = entropy_terms(np.concatenate([np.where(valid, size, 0.0), rest_size]), total)
        else:
            cell = np.where(row_valid, child, n_child + part)
            after = cell_information(space, cell, n_child + n_parts, counts, total)
        owner = np.empty(n_child + n_parts, dtype=np.int64)
        owner[child] = part
        owner[n_child:] = np.arange(n_parts)
        gain = np.bincount(owner, weights=after, minlength=n_parts) - before
        gain = np.where(rest_ok & any_valid, gain, -np.inf)
        better = gain > np.maximum(best_gain, 1e-12)
        best_gain = np.where(better, gain, best_gain)
        best_col = np.where(better, j, best_col)
    return best_gain, best_col, to_child


def refine_locally(
    space: ReleaseSpace,
    start: Plan,
    counts: FloatArray,
    box: LiftBox,
    min_class_size: int = MIN_CLASS_SIZE,
) -> Plan:
    """Specialise every cell of ``start`` top-down while it keeps epsilon and, but for the
    suppressed cell, ``min_class_size`` records (see module doc).

    The rows left as ``*`` in every column are the plan's suppressed rows
    (:class:`~._global_recoding.Plan`); the caller checks them against
    ``max_suppressed``.
    """
    total = float(counts.sum())
    top = space.n_levels - 1
    levels = start.levels.copy()
    levels[start.suppressed] = top  # suppressed rows are released at the top of every hierarchy
    part, n_parts = group_rows(space.keys(levels, None))
    done = np.zeros(levels.shape, dtype=bool)
    while True:
        _, best_col, to_child = _best_splits(
            space, part, n_parts, levels, done, counts, box, total, min_class_size
        )
        col_of_row = best_col[part]
        split_row = col_of_row >= 0
        if not split_row.any():
            break
        rows = np.flatnonzero(split_row)
        j_rows = col_of_row[rows]
        goes = np.stack(to_child)[j_rows, rows]
        child_rows, rest_rows = rows[goes], rows[~goes]
        levels[child_rows, j_rows[goes]] -= 1
        done[child_rows] = False
        done[rest_rows, j_rows[~goes]] = True
        # new partitions: children by (old partition, new labels); remainders stay together
        moved = np.zeros(part.size, dtype=np.int64)
        moved[child_rows] = 1
        key = np.concatenate(
            [
                np.stack([part, split_row.astype(np.int64), moved], axis=1),
                np.where(moved[:, None] == 1, space.keys(levels), -1),
            ],
            axis=1,
        )
        part, n_parts = group_rows(key)
    return space.plan(levels, np.zeros(levels.shape[0], dtype=bool), "local")
