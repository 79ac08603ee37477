"""Local recoding: equivalence classes generalised independently (top-down, Mondrian-style).

Starting from partitions of the records that already meet epsilon (the best global release's
classes and its suppressed cell, or all records as one ``*`` cell), each partition is specialised
one hierarchy level on the column that gains the most information. The children that meet epsilon
become partitions of their own; the ones that do not stay together at the parent's level, and
the split is taken only when that remainder meets epsilon too. Every released cell therefore meets
epsilon at every step; cells that end with the same labels merge, and a merge of cells inside the
lift box stays inside it (the box is convex), so the whole release meets epsilon. Records of
tuples never seen at fit time follow the same tree and stay in the remainder of the first split
whose children they miss.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from numpy.typing import NDArray

from ._cells import LiftBox, cell_counts, group_rows
from ._search import Plan, ReleaseSpace

__all__ = ["refine_locally"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def _contribution(
    space: ReleaseSpace,
    rows: IntArray,
    cell_of: IntArray,
    n_cells: int,
    counts: FloatArray,
    total: float,
) -> float:
    """The cells' additive share of the release's information (entropy or MI with useful)."""
    sizes = cell_counts(cell_of, n_cells, counts[rows].sum(1)) / total
    useful = space.table.useful
    if useful is None:
        p = sizes[sizes > 0]
        return float(-(p * np.log(p)).sum())
    n_u = int(useful.max()) + 1
    joint = np.zeros((n_cells, n_u))
    np.add.at(joint, (cell_of, useful[rows]), counts[rows].sum(1) / total)
    pu = np.zeros(n_u)
    np.add.at(pu, useful, counts.sum(1) / total)
    outer = sizes[:, None] * pu[None, :]
    mask = joint > 0
    return float((joint[mask] * np.log(joint[mask] / outer[mask])).sum())


def _split(
    space: ReleaseSpace,
    rows: IntArray,
    levels: IntArray,
    j: int,
    counts: FloatArray,
    box: LiftBox,
    total: float,
) -> tuple[float, list[IntArray], IntArray] | None:
    """Specialise column ``j`` of one partition: (gain, valid children, remainder) or None."""
    finer = levels.copy()
    finer[j] -= 1
    keys = space.keys(np.tile(finer, (rows.size, 1)), rows=rows)
    child_of, n_child = group_rows(keys)
    ct = cell_counts(child_of, n_child, counts[rows])
    size = ct.sum(1)
    valid = (size > 0) & ~box.breaks(ct)
    if not valid.any():
        return None
    rest = rows[~valid[child_of]]
    if rest.size and counts[rest].sum() > 0 and box.breaks(counts[rest].sum(0)[None])[0]:
        return None
    children = [rows[child_of == c] for c in np.flatnonzero(valid)]
    cells = np.where(valid[child_of], child_of, n_child)
    before = _contribution(space, rows, np.zeros(rows.size, dtype=np.int64), 1, counts, total)
    after = _contribution(space, rows, cells, n_child + 1, counts, total)
    return after - before, children, rest


def refine_locally(space: ReleaseSpace, start: Plan, counts: FloatArray, box: LiftBox) -> Plan:
    """Specialise every cell of ``start`` top-down while it keeps epsilon (see module doc)."""
    total = float(counts.sum())
    plan = start.copy()
    plan.kind = "local"
    top = space.n_levels - 1
    # suppressed rows are released at the top of every hierarchy
    plan.levels[plan.suppressed] = top
    cell_of, n_cells = group_rows(space.keys(plan.levels, None))
    queue: deque[tuple[IntArray, IntArray, frozenset[int]]] = deque(
        (
            np.flatnonzero(cell_of == c),
            plan.levels[np.flatnonzero(cell_of == c)[0]].copy(),
            frozenset(),
        )
        for c in range(n_cells)
    )
    while queue:
        rows, levels, done = queue.popleft()
        best: tuple[float, int, list[IntArray], IntArray] | None = None
        for j in range(levels.size):
            if levels[j] == 0 or j in done:
                continue
            res = _split(space, rows, levels, j, counts, box, total)
            if res is not None and res[0] > 1e-12 and (best is None or res[0] > best[0]):
                best = (res[0], j, res[1], res[2])
        if best is None:
            continue
        _, j, children, rest = best
        finer = levels.copy()
        finer[j] -= 1
        for child in children:
            plan.levels[child] = finer
            queue.append((child, finer.copy(), frozenset()))
        if rest.size:
            queue.append((rest, levels.copy(), done | {j}))
    plan.suppressed = np.all(plan.levels == top[None, :], axis=1)
    return plan
