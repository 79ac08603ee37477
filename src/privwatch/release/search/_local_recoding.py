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
column and round); a round evaluates only the partitions the previous round split (the others
cannot change), so the whole refinement costs about one pass over the count table per level of
the hierarchies, not one per round.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable
from typing import TypeVar, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..cells import LiftBox, cell_counts, entropy_terms, group_rows
from ._global_recoding import Plan, ReleaseSpace, cell_information, useful_shares
from ._options import MIN_CLASS_SIZE

__all__ = ["refine_locally"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
T = TypeVar("T")


def _children(part: IntArray, n_parts: int, label: IntArray, n_labels: int) -> tuple[IntArray, int]:
    """:func:`~privwatch.release.cells.group_rows` of the (partition, label) pairs: cells
    numbered in order of first appearance, from one hash of ``part * n_labels + label``."""
    if float(n_parts) * float(n_labels) >= 2**62:
        return group_rows(np.stack([part, label], axis=1))
    inv = pd.factorize(part * n_labels + label)[0].astype(np.int64)
    return inv, int(inv.max()) + 1 if inv.size else 0


#: A column's children of one state: the child of each row that can move down, the
#: children's counts and sizes, and each child's partition.
_Column = tuple[IntArray, FloatArray, FloatArray, IntArray]
_Parts = tuple[np.ndarray, FloatArray, "FloatArray | None"]


class _SplitMemo:
    """What the refinements of one space keep of their states (:class:`_State`), within
    :attr:`BYTES`: the searches of one table at every margin, epsilon and disclosure refine
    the same start (the all-``*`` root at least) with another lift test, and their first
    rounds, before the tests decide differently, are the same states."""

    #: Largest memory (bytes) of the kept children, counts and partition figures.
    BYTES = 64 * 2**20

    def __init__(self) -> None:
        self.states: dict[bytes, _State] = {}
        self.bytes = 0

    def state(self, key: bytes) -> _State:
        """The record of the state ``key`` names (a new, empty one if none)."""
        return self.states.setdefault(key, _State(self))


class _State:
    """The parts of one refinement state that do not depend on the lift test: per column its
    :data:`_Column` (key ``j``), and (key -1) the partitions' exempt marks, information
    before the split and counts. The arrays are shared: read-only."""

    def __init__(self, memo: _SplitMemo) -> None:
        self.memo = memo
        self.parts: dict[int, tuple[np.ndarray | None, ...]] = {}

    def get(self, j: int, make: Callable[[], T]) -> T:
        """The part ``j``: kept, or ``make()`` (kept while it fits)."""
        hit = self.parts.get(j)
        if hit is not None:
            return cast(T, hit)
        out = make()
        arrays = [a for a in cast(tuple[np.ndarray | None, ...], out) if a is not None]
        size = sum(a.nbytes for a in arrays)
        if self.memo.bytes + size <= self.memo.BYTES:
            for a in arrays:
                a.flags.writeable = False
            self.parts[j] = cast(tuple[np.ndarray | None, ...], out)
            self.memo.bytes += size
        return out


_MEMOS: weakref.WeakKeyDictionary[ReleaseSpace, _SplitMemo] = weakref.WeakKeyDictionary()


def _next_key(key: bytes, col_of_row: IntArray, child: IntArray) -> bytes:
    """The key of the state a round's splits lead to: the state is a function of the state
    before, the column each evaluated row splits on (-1: none) and the child each split row
    goes to (-1: the remainder)."""
    h = hashlib.blake2b(key, digest_size=16)
    h.update(col_of_row.astype(np.int16).tobytes())
    h.update(child.astype(np.int32).tobytes())
    return h.digest()


#: Two whole counts below this share one float in :func:`_pack` (2 x 26 bits < 53).
_PACK = 2.0**26


def _sums(cell: IntArray, n_cells: int, cols: FloatArray, n_cols: int) -> FloatArray:
    """:func:`~privwatch.release.cells.cell_counts` of rows given column by column: ``cols``
    (n_columns, n_rows), each contiguous, so every bincount reads its weights in place; the
    same sums (each column's rows added in row order). ``n_cols``: the columns out; when
    ``cols`` has fewer, they are :func:`_pack`'s pairs, unpacked here."""
    out = np.empty((n_cells, n_cols))
    if cols.shape[0] == n_cols:
        for k in range(n_cols):
            out[:, k] = np.bincount(cell, weights=cols[k], minlength=n_cells)
        return out
    for i in range(cols.shape[0]):
        both = np.bincount(cell, weights=cols[i], minlength=n_cells)
        if 2 * i + 1 < n_cols:
            high = np.floor(both / _PACK)
            out[:, 2 * i + 1] = high
            out[:, 2 * i] = both - high * _PACK
        else:
            out[:, 2 * i] = both
    return out


def _pack(cols: FloatArray) -> FloatArray:
    """Columns ``2i`` and ``2i + 1`` of whole, non-negative counts that total below 2^26 as
    one, ``c_2i + c_2i+1 * 2^26`` (a last odd column alone): every sum of them over rows is a
    whole number below 2^52, so exact, and splits back exactly into the two columns' sums
    (:func:`_sums`), which are exact too: half the bincounts, the same figures."""
    out = cols[0::2].copy()
    out[: cols.shape[0] // 2] += cols[1::2] * _PACK
    return out


def _best_splits(
    space: ReleaseSpace,
    rows: IntArray,
    part: IntArray,
    n_parts: int,
    levels: IntArray,
    done: np.ndarray,
    codes: IntArray,
    cols: FloatArray,
    sizes: FloatArray,
    box: LiftBox,
    total: float,
    min_class_size: int,
    pu: FloatArray | None,
    whole: bool,
    n_cols: int,
    kept: _State | None = None,
) -> tuple[FloatArray, IntArray, IntArray]:
    """Per partition: the best gain, its column (-1: none) and, per column (n_observed, n_rows),
    the valid child
    (one that meets epsilon and holds ``min_class_size`` records) each row goes to (-1: none;
    a column's children are numbered apart from the other columns').

    ``rows``: the tuple rows of the partitions evaluated (whole partitions); ``part`` is of those
    rows; ``levels``, ``done`` and ``codes`` (n_observed, n_rows) and ``cols``, their counts
    (n_sensitive, n_rows; or :func:`_pack`'s pairs of them, of ``n_cols`` columns, when
    ``whole``), are of them column by column, and ``sizes`` their row sums
    (``counts.sum(1)``); ``pu``: the useful shares of all rows (or None).

    Only the rows that can move one level down in a column form its children; the others stay
    in their partition's remainder. ``whole``: every count is a whole number (and the total
    below 2^53), so a remainder is its partition's counts less its valid children's, exactly;
    else it is summed over its rows. Either way every figure is the one a sum over the rows
    gives, bit for bit: children keep their rows in row order, and the children a column
    cannot form would add exact zeros. ``kept``: the record of this state (:class:`_State`),
    which keeps what does not depend on the lift test: each column's children and their
    counts, the information before the split and the partitions' counts."""
    m, n = levels.shape
    least = min_class_size - 1e-9 if min_class_size > 1 else 0.0

    def state() -> _Parts:
        # a remainder released as '*' everywhere is the suppressed cell: no minimum size
        exempt = np.ones(n_parts, dtype=bool)
        if min_class_size > 1:
            exempt = cell_counts(part, n_parts, space.all_star(levels.T, rows).astype(float)) > 0
        before = _information(space, part, n_parts, sizes, total, rows, pu)
        return exempt, before, _sums(part, n_parts, cols, n_cols) if whole else None

    exempt, before, part_counts = state() if kept is None else kept.get(-1, state)
    best_gain = np.zeros(n_parts)
    best_col = np.full(n_parts, -1, dtype=np.int64)
    to_child = np.full((m, n), -1, dtype=np.int64)
    for j in range(m):
        finer = levels[j] - 1
        sub = np.flatnonzero((finer >= 0) & ~done[j])
        if not sub.size:  # no child in this column: no partition splits on it
            continue

        def children(j: int = j, finer: IntArray = finer, sub: IntArray = sub) -> _Column:
            table = space.tables[j]
            label = table.ravel()[finer[sub] * table.shape[1] + codes[j][sub]]
            child, n_child = _children(part[sub], n_parts, label, len(space.vocab[j]))
            if sub.size == n:
                ct = _sums(child, n_child, cols, n_cols)
            elif 2 * sub.size >= n:  # the other rows into one more cell, dropped: no gather
                spread = np.full(n, n_child, dtype=np.int64)
                spread[sub] = child
                ct = _sums(spread, n_child + 1, cols, n_cols)[:n_child]
            else:
                ct = _sums(child, n_child, np.take(cols, sub, axis=1), n_cols)
            parent = np.empty(n_child, dtype=np.int64)
            parent[child] = part[sub]
            return child, ct, ct.sum(1), parent

        child, ct, size, parent = children() if kept is None else kept.get(j, children)
        n_child = len(size)
        valid = (size > 0) & (size >= least) & ~box.breaks(ct)
        row_child = to_child[j]
        row_child[sub] = np.where(valid[child], child, -1)
        if part_counts is not None:
            rest = part_counts.copy()
            if valid.any():
                rest -= cell_counts(parent[valid], n_parts, ct[valid])
        else:
            rest = _sums(part, n_parts, cols * (row_child < 0), n_cols)
        rest_size = rest.sum(1)
        rest_ok = (rest_size <= 0) | (~box.breaks(rest) & ((rest_size >= least) | exempt))
        any_valid = np.zeros(n_parts, dtype=bool)
        any_valid[parent[valid]] = True
        # after: valid children apart, the remainder as one cell
        if space.table.useful is None:  # entropy terms of the cell sizes, directly
            after = entropy_terms(np.concatenate([np.where(valid, size, 0.0), rest_size]), total)
        else:
            cell = n_child + part
            cell[sub] = np.where(valid[child], child, cell[sub])
            after = _information(space, cell, n_child + n_parts, sizes, total, rows, pu)
        owner = np.concatenate([parent, np.arange(n_parts)])
        gain = np.bincount(owner, weights=after, minlength=n_parts) - before
        gain = np.where(rest_ok & any_valid, gain, -np.inf)
        better = gain > np.maximum(best_gain, 1e-12)
        best_gain = np.where(better, gain, best_gain)
        best_col = np.where(better, j, best_col)
    return best_gain, best_col, to_child


def _information(
    space: ReleaseSpace,
    cell: IntArray,
    n_cells: int,
    sizes: FloatArray,
    total: float,
    rows: IntArray,
    pu: FloatArray | None,
) -> FloatArray:
    """:func:`~._global_recoding.cell_information` of rows whose counts sum to ``sizes``
    (it reads the counts only through their row sums: a one-column table of them sums to
    the same figures)."""
    if space.table.useful is None:
        return entropy_terms(cell_counts(cell, n_cells, sizes), total)
    return cell_information(space, cell, n_cells, sizes[:, None], total, rows, pu)


def refine_locally(
    space: ReleaseSpace,
    start: Plan,
    counts: FloatArray,
    box: LiftBox,
    min_class_size: int = MIN_CLASS_SIZE,
    states: bytes | None = None,
) -> Plan:
    """Specialise every cell of ``start`` top-down while it keeps epsilon and, but for the
    suppressed cell, ``min_class_size`` records (see module doc).

    ``states``: bytes that identify ``start``, ``counts`` and ``min_class_size`` on this space;
    with it, the states of the refinement are kept (:class:`_SplitMemo`) and a refinement of
    the same start with another lift test reuses, in the states it shares (the same splits
    so far), what does not depend on the test: the same arrays, so the same plan.

    The rows left as ``*`` in every column are the plan's suppressed rows
    (:class:`~._global_recoding.Plan`); the caller checks them against
    ``max_suppressed``.

    Only the partitions split in the previous round are evaluated again: a partition that was
    not split keeps its rows, levels and done marks, so its best split (every figure of it is a
    sum over its own rows, in row order) is again none.
    """
    total = float(counts.sum())
    pu = None if space.table.useful is None else useful_shares(space, counts, total)
    whole = bool(np.array_equal(counts, np.floor(counts)) and np.abs(counts).sum() < 2**53)
    top = space.n_levels - 1
    start_levels = start.levels.copy()
    start_levels[start.suppressed] = top  # suppressed rows: at the top of every hierarchy
    part, n_parts = group_rows(space.keys(start_levels, None))
    # per-row arrays held column by column (n_columns, n_rows): a column's values lie together
    levels = np.ascontiguousarray(start_levels.T)
    done = np.zeros(levels.shape, dtype=bool)
    codes = np.ascontiguousarray(space.table.codes.T)
    cols = np.ascontiguousarray(counts.T)
    if whole and total < _PACK and cols.shape[0] > 1 and not (counts < 0).any():
        cols = _pack(cols)  # half the bincounts, the same sums
    sizes = counts.sum(1)
    n_rows = levels.shape[1]
    memo = None if states is None else _MEMOS.setdefault(space, _SplitMemo())
    active = np.arange(n_rows, dtype=np.int64)  # rows whose partition may still split
    while active.size:
        sub = pd.factorize(part[active])[0].astype(np.int64)  # any numbering will do
        args = (levels, done, codes, cols, sizes)
        if active.size < n_rows:  # else every row (the first round): no copies
            args = (*(np.take(a, active, axis=1) for a in args[:4]), sizes[active])
        kept = None if memo is None or states is None else memo.state(states)
        _, best_col, to_child = _best_splits(
            space, active, sub, int(sub.max()) + 1, *args, box, total, min_class_size, pu, whole,
            counts.shape[1], kept,
        )  # fmt: skip
        col_of_row = best_col[sub]
        split = np.flatnonzero(col_of_row >= 0)
        if not split.size:
            break
        rows = active[split]
        j_rows = col_of_row[split]
        child = to_child[j_rows, split]
        if states is not None:
            states = _next_key(states, col_of_row, child)
        goes = child >= 0
        child_rows, rest_rows = rows[goes], rows[~goes]
        levels[j_rows[goes], child_rows] -= 1
        done[:, child_rows] = False
        done[j_rows[~goes], rest_rows] = True
        # new partitions: each valid child of the chosen column (its rows share every other
        # label: a partition's rows share all of theirs); a remainder keeps its partition
        if child_rows.size:
            key = j_rows[goes] * (int(child.max()) + 1) + child[goes]
            new = pd.factorize(key)[0].astype(np.int64)
            part[child_rows] = n_parts + new
            n_parts += int(new.max()) + 1
        active = rows
    return space.plan(np.ascontiguousarray(levels.T), np.zeros(n_rows, dtype=bool), "local")
