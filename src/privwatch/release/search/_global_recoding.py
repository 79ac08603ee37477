"""The release space of global recoding: the tuple rows, their hierarchies and the releases.

:class:`ReleaseSpace` holds the count table's tuple rows, each observed column's hierarchy
(the label of every code at every level) and what is computed once per space (a node's cells,
the all-``*`` root); a :class:`Plan` gives every tuple row a level per column and marks the
suppressed rows; :func:`cell_information` and :func:`information` give the information a release
keeps (H(Y), or I(Y; U) with a useful column). The best-first search of the generalisation
lattice over this space is :mod:`._lattice`.
"""

from __future__ import annotations

import hashlib
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
    cell_counts,
    entropy_terms,
    first_rows,
    group_rows,
)
from ..hierarchies import SUPPRESSED, Hierarchy
from ._memo import SearchMemo

__all__ = ["Plan", "ReleaseSpace", "finest_bound"]

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
