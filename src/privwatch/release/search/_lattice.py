"""Global recoding: the best node of the generalisation lattice under lift privacy.

A node gives every observed column one hierarchy level. Its equivalence classes that break
epsilon are suppressed into one cell (every column ``*``), and since that merged cell must meet
epsilon too, safe classes are added to it until it does (the X^c-invariant randomization of
Sadeghi et al. applied to the flagged set enlarged by safe symbols), cheapest in information
first, within the suppression limit.

**Pruning.** Lift privacy is not monotone under generalisation (a coarser class can break epsilon
where its parts did not), so the search never prunes on privacy. It prunes on information: the
information a node can keep is at most that of its classes without suppression, and that bound
only falls when a column is generalised further (merging classes lowers their entropy and, by
data processing, their information about a useful column). A best-first search from the most
detailed node, ordered by that bound, can therefore stop as soon as the bound of the next node is
no better than the best release found: every node not yet seen is coarser than one in the queue.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Hashable

import numpy as np

from ..cells import LiftBox, cell_counts, entropy_of_sizes, row_sums
from ._global_recoding import (
    FloatArray,
    IntArray,
    Plan,
    ReleaseSpace,
    information,
)
from ._memo import SearchMemo
from ._options import MAX_NODES, MIN_CLASS_SIZE
from ._suppression import choose_suppression

__all__ = ["NodeResult", "counts_digest", "evaluate_node", "search_global"]


class NodeResult:
    """The best release at one lattice node: its levels, the information it keeps, the share of
    records it suppresses, and (built on first use: the search evaluates many nodes and keeps
    one) its :class:`Plan`."""

    def __init__(
        self,
        levels: tuple[int, ...],
        information: float,
        suppressed_share: float,
        plan: Plan | None = None,
        *,
        suppressed_rows: np.ndarray | None = None,
    ) -> None:
        self.levels, self.information, self.suppressed_share = levels, information, suppressed_share
        self._plan, self._suppressed_rows = plan, suppressed_rows

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            assert self._suppressed_rows is not None
            n_rows = self._suppressed_rows.shape[0]
            lv = np.tile(np.asarray(self.levels, dtype=np.int64), (n_rows, 1))
            # the Plan rule holds: the all-'*' class is forced into the suppressed ones
            self._plan = Plan(lv, self._suppressed_rows)
        return self._plan


def _node_information(
    space: ReleaseSpace,
    cell_of: IntArray,
    n_cells: int,
    counts: FloatArray,
    sizes: FloatArray,
    merged: np.ndarray | None = None,
) -> float:
    """:func:`information` of a node's cells, the ``merged`` ones as one cell; without a useful
    column, the entropy of the cell ``sizes`` (records per cell) directly."""
    if space.table.useful is not None:
        cells = cell_of if merged is None else np.where(merged[cell_of], n_cells, cell_of)
        return information(space, cells, n_cells + 1, counts)
    n = float(sizes.sum())
    if n <= 0:
        return 0.0
    if merged is not None and merged.any():
        sizes = np.append(sizes[~merged], sizes[merged].sum())
    return entropy_of_sizes(sizes, n)


def evaluate_node(
    space: ReleaseSpace,
    levels: tuple[int, ...],
    counts: FloatArray,
    box: LiftBox,
    max_suppressed: float,
    *,
    min_class_size: int = MIN_CLASS_SIZE,
    counts_key: Hashable | None = None,
    plugin_refused: set[tuple[int, ...]] | None = None,
) -> tuple[float, NodeResult | None]:
    """(upper bound, best release at the node or None) for one lattice node.

    The classes that break epsilon, hold fewer than ``min_class_size`` records or are released
    as ``*`` in every column already (the top node; a hierarchy with ``*`` below its top) are
    suppressed, and all of them count against ``max_suppressed``. ``counts_key``: an
    identifier of integer ``counts``, under which the node's cell counts and lift test are
    remembered (:meth:`SearchMemo.node_counts`, :meth:`SearchMemo.node_breaks`).
    ``plugin_refused``: the node is added when the records of its classes that break the
    plug-in test or are forced exceed the limit (it is then refused at every credible level).
    """
    cell_of, n_cells = space.node_cells(levels)

    def count() -> tuple[FloatArray, FloatArray, float]:
        finer = None if counts_key is None else space.memo.finer_counts(levels, counts_key)
        if finer is None:
            ct = cell_counts(cell_of, n_cells, counts)
        else:  # integer counts: the finer cells' sums add up exactly to the same bits
            ct = cell_counts(cell_of[space.node_first_rows(finer[0])], n_cells, finer[1])
        sizes = row_sums(ct)
        ct.flags.writeable = sizes.flags.writeable = False  # shared by the searches
        return ct, sizes, _node_information(space, cell_of, n_cells, counts, sizes)

    if counts_key is None:
        ct, sizes, bound = count()
    else:  # the cell counts as floats only when a lift test or the suppression needs them
        ct, sizes, bound = space.memo.node_counts(levels, counts_key, count, as_float=False)

    floats: list[FloatArray] = []

    def cells() -> FloatArray:
        if not floats:
            floats.append(SearchMemo.as_float(ct))
        return floats[0]

    n = float(sizes.sum())
    forced = sizes < (min_class_size - 1e-9 if min_class_size > 1 else 0.0)
    star = space.node_star(levels)
    if star is not None:
        forced[cell_of[star]] = True
    broken = None
    if counts_key is not None:
        if box.confidence is not None:
            # the plug-in breaks are a subset of the credible ones: when they and the forced
            # classes already pass the limit, so do the credible ones (integer sizes: exact
            # sums), and choose_suppression would refuse the node without a Beta CDF
            plugin = space.memo.node_breaks(levels, counts_key, box, cells, plugin=True)
            if sizes[plugin | forced].sum() > max_suppressed * n + 1e-9:
                if plugin_refused is not None:
                    plugin_refused.add(levels)
                return bound, None
        broken = space.memo.node_breaks(levels, counts_key, box, cells)
        # without a margin the test is the plug-in one (LiftBox.breaks)
        refused = sizes[broken | forced].sum() > max_suppressed * n + 1e-9
        if plugin_refused is not None and box.confidence is None and refused:
            plugin_refused.add(levels)
    sup_cells = choose_suppression(cells(), box, max_suppressed * n, n, forced, broken)
    if sup_cells is None:
        return bound, None
    # classes without a fitted record (only in held-out data) have no estimate: suppressed
    sup_cells = sup_cells | (sizes <= 0)
    value = _node_information(space, cell_of, n_cells, counts, sizes, sup_cells)
    share = float(sizes[sup_cells].sum()) / n if n > 0 else 0.0
    return bound, NodeResult(levels, value, share, suppressed_rows=sup_cells[cell_of])


def counts_digest(counts: FloatArray) -> bytes:
    """A digest of ``counts`` (a count table's rows), under which what is computed from them
    is remembered: whole searches (:meth:`ReleaseSpace.remember`) and the nodes' lift tests."""
    return hashlib.blake2b(np.ascontiguousarray(counts).tobytes(), digest_size=16).digest()


def search_global(
    space: ReleaseSpace,
    counts: FloatArray,
    box: LiftBox,
    max_suppressed: float,
    *,
    max_nodes: int = MAX_NODES,
    min_class_size: int = MIN_CLASS_SIZE,
    digest: bytes | None = None,
) -> tuple[NodeResult, int]:
    """Best-first search of the lattice; returns the best node and how many were evaluated.

    At most ``max_nodes`` nodes are evaluated: with fewer, the result is the best global recoding
    (exactly, for the suppression rule of :func:`evaluate_node`); at the cap it is the best one
    found (still a valid release), and the caller says so.

    The all-``*`` release (every record in one cell, lift 1 everywhere, every record
    suppressed) is the last resort, so a result always exists; it keeps no information and is
    the only release allowed past ``max_suppressed``.

    ``digest``: :func:`counts_digest` of ``counts`` when the caller has it already.
    """

    # the nodes' lift tests are remembered per counts (integer counts only: LiftBox.breaks)
    counts_key: Hashable | None = None
    if np.array_equal(counts, np.round(counts)):
        counts_key = (counts.shape, counts_digest(counts) if digest is None else digest)

    # every node the search evaluates refused by the plug-in test (a node refused by it is
    # refused at every credible level), so none kept: the search at another level evaluates
    # the same nodes in the same order (the order follows the bounds alone) and keeps none
    refused: set[tuple[int, ...]] | None = None
    known: object = None
    whole_key: Hashable = None
    if counts_key is not None:
        refused = set()
        setting = (max_suppressed, min_class_size, max_nodes)
        whole_key = ("refused", counts_key, box.signature, setting)
        known = None if box.confidence is None else space.recall(whole_key)

    def evaluate(node: tuple[int, ...]) -> tuple[float, NodeResult | None]:
        return evaluate_node(
            space,
            node,
            counts,
            box,
            max_suppressed,
            min_class_size=min_class_size,
            counts_key=counts_key,
            plugin_refused=refused,
        )

    m = len(space.hierarchies)
    top = tuple(int(v) - 1 for v in space.n_levels)
    start = (0,) * m
    best: NodeResult | None = None
    if isinstance(known, int):
        heap: list[tuple[float, tuple[int, ...]]] = []
        evaluated = known
    else:
        bound, res = evaluate(start)
        seen = {start: res}
        heap = [(-bound, start)]
        evaluated = 1
    while heap:
        neg_bound, node = heapq.heappop(heap)
        if best is not None and -neg_bound <= best.information + 1e-12:
            break
        res = seen[node]
        if res is not None and (best is None or res.information > best.information + 1e-12):
            best = res
        for j in range(m):
            if node[j] < top[j]:
                nxt = (*node[:j], node[j] + 1, *node[j + 1 :])
                if nxt in seen:
                    continue
                b, r = evaluate(nxt)
                evaluated += 1
                seen[nxt] = r
                if r is not None and (best is None or r.information > best.information + 1e-12):
                    best = r
                heapq.heappush(heap, (-b, nxt))
        if evaluated >= max_nodes:
            break
    done = best is None and refused is not None and not isinstance(known, int)
    if done and len(refused or ()) == len(seen):  # (seen: the nodes evaluated)
        space.remember(whole_key, lambda: evaluated)
    if best is None:
        _, best = evaluate(top)
    if best is None:
        best = _all_in_one_cell(space, top, counts)
    return best, evaluated


def _all_in_one_cell(space: ReleaseSpace, top: tuple[int, ...], counts: FloatArray) -> NodeResult:
    """The all-``*`` node released as it is, every record suppressed: when no node stays within
    ``max_suppressed`` (the top node alone suppresses every record), or when even it fails the
    box (a ``confidence`` margin, or counts other than the prior's: a held-out fold's training
    folds at epsilon 0)."""
    n_rows = space.table.codes.shape[0]
    plan = space.plan(np.tile(np.asarray(top, dtype=np.int64), (n_rows, 1)), np.ones(n_rows, bool))
    return NodeResult(top, information(space, *space.node_cells(top), counts), 1.0, plan)
