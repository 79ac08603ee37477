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
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..cells import (
    CountTable,
    LiftBox,
    cell_counts,
    entropy_of_sizes,
    entropy_terms,
    first_rows,
    group_rows,
    row_sums,
)
from ..hierarchies import SUPPRESSED, Hierarchy
from ._memo import SearchMemo
from ._options import MAX_NODES, MIN_CLASS_SIZE
from ._suppression import choose_suppression

__all__ = ["Plan", "ReleaseSpace", "counts_digest", "finest_bound", "search_global"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
T = TypeVar("T")


class ReleaseSpace:
    """The released labels reachable from each tuple row of a count table."""

    def __init__(self, table: CountTable, hierarchies: dict[str, Hierarchy]) -> None:
        self.table = table
        self.hierarchies = [hierarchies[c] for c in table.observed]
        self.n_levels = np.array([h.n_levels for h in self.hierarchies], dtype=np.int64)
        self.vocab: list[list[str]] = []
        # text_ids[j][level]: per value code, the id of its label text in the column vocabulary
        self.text_ids: list[list[IntArray]] = []
        self.star: list[int] = []
        for h in self.hierarchies:
            words: dict[str, int] = {}
            per_level = []
            for row in h.labels:
                per_level.append(np.array([words.setdefault(t, len(words)) for t in row]))
            self.text_ids.append(per_level)
            self.vocab.append(list(words))
            self.star.append(words[SUPPRESSED])
        self.tables = [np.stack(per_level) for per_level in self.text_ids]  # (levels, values)
        # is_star[j][level, value]: the value is released as '*' at that level
        self.is_star = [t == star for t, star in zip(self.tables, self.star, strict=True)]
        sizes = [float(len(v)) for v in self.vocab]
        self._flat = float(np.prod(sizes)) < 2**62
        self._mult = np.cumprod([1, *[len(v) for v in self.vocab[::-1]]])[:-1][::-1].astype(
            np.int64
        )
        self._cache: dict[tuple[int, ...], tuple[IntArray, int]] = {}
        self._first: dict[tuple[int, ...], IntArray] = {}
        self._remembered: dict[Hashable, object] = {}
        self._plans: dict[int, Plan] = {}  # the plans the remembered results hold, by id
        self._star: dict[tuple[int, ...], np.ndarray] = {}  # node_star of the nodes with one
        self._plan_bytes = 0
        #: the lift tests and local refinements reused across searches (:class:`SearchMemo`)
        self.memo = SearchMemo()

    #: Largest memory (bytes) of each cache: the lattice-node groupings, and the plans of the
    #: searches remembered.
    CACHE_BYTES = 256 * 2**20
    #: Largest number of results remembered (searches, held-out checks).
    MAX_REMEMBERED = 256

    def remember(
        self, key: Hashable, search: Callable[[], T], plan: Callable[[T], Plan] | None = None
    ) -> T:
        """``search()``, made once per ``key`` on this space while the plans remembered fit
        in :attr:`CACHE_BYTES` and the results number at most :attr:`MAX_REMEMBERED` (a
        search is a deterministic function of its options and counts, so it is not repeated).
        ``plan``: the plan (levels of every tuple row) the result holds, counted once however
        many results hold it (a search's fit and its margins' result share one); a result
        without one (a held-out check's figures) holds a few numbers and counts none."""
        if key in self._remembered:
            return cast(T, self._remembered[key])
        out = search()
        held = None if plan is None else plan(out)
        new = held is not None and id(held) not in self._plans
        plan_bytes = self.table.codes.shape[0] * (8 * len(self.hierarchies) + 1) if new else 0
        room = self._plan_bytes + plan_bytes <= self.CACHE_BYTES
        if room and len(self._remembered) < self.MAX_REMEMBERED:
            self._remembered[key] = out
            self._plan_bytes += plan_bytes
            if held is not None:
                self._plans[id(held)] = held  # kept: its id stays its own
        return out

    def recall(self, key: Hashable) -> object | None:
        """The result remembered under ``key`` (:meth:`remember`), or None."""
        return self._remembered.get(key)

    def node_cells(self, node: tuple[int, ...]) -> tuple[IntArray, int]:
        """Cell of every tuple row at a global-recoding node (cached: it does not depend on the
        counts or on epsilon, so the frontier and the held-out folds reuse it)."""
        hit = self._cache.get(node)
        if hit is not None:
            return hit
        codes = self.table.codes
        if self._flat:
            flat = np.zeros(codes.shape[0], dtype=np.int64)
            for j, level in enumerate(node):
                flat += self.tables[j][level][codes[:, j]] * self._mult[j]
            inv = np.asarray(pd.factorize(flat)[0], dtype=np.int64)
            out = (inv, int(inv.max()) + 1 if inv.size else 0)
        else:
            lv = np.tile(np.asarray(node, dtype=np.int64), (codes.shape[0], 1))
            out = group_rows(self.keys(lv))
        if (len(self._cache) + 1) * codes.shape[0] * 8 <= self.CACHE_BYTES:
            self._cache[node] = out
        return out

    def node_first_rows(self, node: tuple[int, ...]) -> IntArray:
        """The first tuple row of every cell of a global-recoding node (:meth:`node_cells`;
        kept, like it, while the groupings fit in :attr:`CACHE_BYTES`)."""
        hit = self._first.get(node)
        if hit is not None:
            return hit
        cell_of, n_cells = self.node_cells(node)
        out = first_rows(cell_of, n_cells)
        if node in self._cache:
            self._first[node] = out
        return out

    def keys(
        self, levels: IntArray, suppressed: np.ndarray | None = None, rows: IntArray | None = None
    ) -> IntArray:
        """Label text ids (n_rows, n_observed) of the tuple rows (all, or ``rows``) at levels."""
        codes = self.table.codes if rows is None else self.table.codes[rows]
        out = np.empty_like(codes)
        for j in range(codes.shape[1]):
            out[:, j] = self.tables[j][levels[:, j], codes[:, j]]
        if suppressed is not None and suppressed.any():
            out[suppressed] = np.array(self.star)
        return out

    def labels(self, keys: IntArray) -> list[list[str]]:
        """Label texts of key rows, column by column."""
        return [[self.vocab[j][k] for k in keys[:, j]] for j in range(keys.shape[1])]

    def all_star(self, levels: IntArray, rows: IntArray | None = None) -> np.ndarray:
        """Whether each tuple row (all, or ``rows``) is released as ``*`` in every column at
        ``levels`` (its top level, or a lower one its hierarchy labels ``*``)."""
        codes = self.table.codes if rows is None else self.table.codes[rows]
        out = np.ones(codes.shape[0], dtype=bool)
        for j in range(codes.shape[1]):
            out &= self.is_star[j][levels[:, j], codes[:, j]]
        return out

    def node_star(self, node: tuple[int, ...]) -> np.ndarray | None:
        """:meth:`all_star` at a global node, None when no row is (the usual case below the top:
        a level without a ``*`` label in some column)."""
        if not all(self.is_star[j][level].any() for j, level in enumerate(node)):
            return None
        hit = self._star.get(node)
        if hit is None:
            hit = self.all_star(
                np.tile(np.asarray(node, dtype=np.int64), (self.table.codes.shape[0], 1))
            )
            hit.flags.writeable = False
            self._star[node] = hit
        return hit

    def plan(self, levels: IntArray, suppressed: np.ndarray, kind: str = "global") -> Plan:
        """The release of every tuple row at ``levels``, ``suppressed`` rows as ``*``; a row
        released as ``*`` in every column at its levels is marked suppressed too (the
        :class:`Plan` rule)."""
        return Plan(levels, np.asarray(suppressed, dtype=bool) | self.all_star(levels), kind)

    @cached_property
    def root(self) -> Plan:
        """The all-``*`` root: every tuple row at the top of every hierarchy, suppressed (the
        start of a local refinement; built once)."""
        n_rows = self.table.codes.shape[0]
        return self.plan(np.tile(self.n_levels - 1, (n_rows, 1)), np.ones(n_rows, bool))


@dataclass
class Plan:
    """A release: the level of every tuple row per column, and which rows are suppressed.

    **Suppressed** means released as ``*`` in every observed column, whichever step did it: the
    suppressed cell of a global node, a global node at the top of every hierarchy, local
    recoding that leaves a cell at the top, or a hierarchy that labels a value ``*`` below its
    top. :meth:`ReleaseSpace.plan` builds a plan with that rule (every search does), so
    ``suppressed`` marks exactly the rows released as ``*`` everywhere, and
    ``max_suppressed`` bounds their total.

    Attributes
    ----------
    levels : int array (n_rows, n_observed)
        The hierarchy level each tuple row is released at, per column.
    suppressed : bool array (n_rows,)
        The rows released as ``*`` in every column (whatever their ``levels`` say).
    kind : {"global", "local"}
        The recoding that produced it.
    """

    levels: IntArray
    suppressed: np.ndarray
    kind: str = "global"
    #: Its digest and release cells once computed (:meth:`digest`, :func:`release_cells`).
    _known: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def copy(self) -> Plan:
        return Plan(self.levels.copy(), self.suppressed.copy(), self.kind)

    def digest(self) -> bytes:
        """A digest of its levels and suppressed rows, to remember what is computed from it;
        computed once, the arrays then made read-only (a plan is not changed once built)."""
        hit = self._known.get("digest")
        if hit is None:
            self.levels.flags.writeable = self.suppressed.flags.writeable = False
            digest = hashlib.blake2b(np.ascontiguousarray(self.levels).tobytes(), digest_size=16)
            digest.update(np.ascontiguousarray(self.suppressed).tobytes())
            hit = self._known["digest"] = digest.digest()
        return cast(bytes, hit)

    def suppressed_records(self, counts: FloatArray) -> float:
        """How many of the records counted in ``counts`` (rows: tuple rows) it releases as ``*``
        in every column: the one count the result, the frontier, the node search and the
        ``max_suppressed`` bound use."""
        return float(counts[self.suppressed].sum())


def cell_information(
    space: ReleaseSpace,
    cell_of: IntArray,
    n_cells: int,
    counts: FloatArray,
    total: float,
    rows: IntArray | None = None,
    pu: FloatArray | None = None,
) -> FloatArray:
    """Each cell's additive share of the release's information: -p log p (entropy), or with a
    useful column sum_u p(c, u) log p(c, u) / (p(c) p(u)) (mutual information).

    ``rows``: the tuple rows ``cell_of`` and ``counts`` are of (default all); then ``pu``, the
    useful shares p(u) of all rows (:func:`useful_shares`), is required."""
    sizes = cell_counts(cell_of, n_cells, counts.sum(1))
    useful = space.table.useful
    if useful is None:
        return entropy_terms(sizes, total)
    n_u = int(useful.max()) + 1
    if pu is None:
        assert rows is None, "a subset of rows needs the shares p(u) of all rows"
        pu = useful_shares(space, counts, total)
    if rows is not None:
        useful = useful[rows]
    size = sizes / total
    joint = np.zeros((n_cells, n_u))
    np.add.at(joint, (cell_of, useful), counts.sum(1) / total)
    outer = size[:, None] * pu[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log(joint / np.where(outer > 0, outer, 1.0)), 0.0)
    return np.asarray(terms.sum(1), dtype=float)


def useful_shares(space: ReleaseSpace, counts: FloatArray, total: float) -> FloatArray:
    """p(u): each useful value's share of the ``total`` records (``counts`` of every tuple row)."""
    useful = space.table.useful
    assert useful is not None
    n_u = int(useful.max()) + 1
    out: FloatArray = np.bincount(useful, weights=counts.sum(1), minlength=n_u) / total
    return out


def information(space: ReleaseSpace, cell_of: IntArray, n_cells: int, counts: FloatArray) -> float:
    """Entropy of the released cells (nats), or their MI with the useful column."""
    total = float(counts.sum())
    if total <= 0:
        return 0.0
    return float(cell_information(space, cell_of, n_cells, counts, total).sum())


def finest_bound(space: ReleaseSpace, counts: FloatArray) -> float:
    """The information of the most detailed node without suppression: no release, global or
    local, keeps more (merging cells only loses information), so a release that reaches it
    cannot be beaten by refining the all-``*`` root locally (the search's own pruning bound)."""
    start = (0,) * len(space.hierarchies)
    return information(space, *space.node_cells(start), counts)


def release_cells(space: ReleaseSpace, plan: Plan) -> tuple[IntArray, int]:
    """Cell of every tuple row under ``plan`` (cells keyed by released label texts); kept on
    the plan (its arrays made read-only) for the space it was last asked of."""
    hit = plan._known.get("cells")
    if hit is not None and hit[0]() is space:
        return cast(tuple[IntArray, int], hit[1])
    out = group_rows(space.keys(plan.levels, plan.suppressed))
    out[0].flags.writeable = plan.levels.flags.writeable = plan.suppressed.flags.writeable = False
    plan._known["cells"] = (weakref.ref(space), out)
    return out


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
) -> tuple[float, NodeResult | None]:
    """(upper bound, best release at the node or None) for one lattice node.

    The classes that break epsilon, hold fewer than ``min_class_size`` records or are released
    as ``*`` in every column already (the top node; a hierarchy with ``*`` below its top) are
    suppressed, and all of them count against ``max_suppressed``. ``counts_key``: an
    identifier of integer ``counts``, under which the node's cell counts and lift test are
    remembered (:meth:`SearchMemo.node_counts`, :meth:`SearchMemo.node_breaks`).
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
                return bound, None
        broken = space.memo.node_breaks(levels, counts_key, box, cells)
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

    def evaluate(node: tuple[int, ...]) -> tuple[float, NodeResult | None]:
        return evaluate_node(
            space,
            node,
            counts,
            box,
            max_suppressed,
            min_class_size=min_class_size,
            counts_key=counts_key,
        )

    m = len(space.hierarchies)
    top = tuple(int(v) - 1 for v in space.n_levels)
    start = (0,) * m
    bound, res = evaluate(start)
    seen = {start: res}
    heap: list[tuple[float, tuple[int, ...]]] = [(-bound, start)]
    best: NodeResult | None = None
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
