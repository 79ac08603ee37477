"""One search at one set of options: global recoding, then local refinement, and its check.

:class:`Fitter` is the only place a release is searched: on all records, on each held-out fold's
training folds, at each frontier point and for each alternative, always from a whole
:class:`~privwatch.release.search.SearchOptions`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...exceptions import PrivwatchError
from ..cells import LiftBox, cell_counts, group_rows
from ..heldout import HeldOut, held_out_fails
from ._global_recoding import (
    FloatArray,
    Plan,
    ReleaseSpace,
    finest_bound,
    information,
    release_cells,
)
from ._held_out import HeldOutCheck
from ._lattice import counts_digest, search_global
from ._local_recoding import refine_locally
from ._options import SearchOptions

__all__ = [
    "Fit",
    "Fitter",
    "check_fails",
    "checked_release",
    "in_sample_check",
    "input_information",
    "kept_information",
    "plan_digest",
]


class Fit(NamedTuple):
    """The outcome of one search.

    Attributes
    ----------
    plan : Plan
        The release: the better of the global recoding and its local refinement.
    information_global : float
        Information kept by the best global recoding (nats).
    information_local : float or None
        Information kept by the best local refinement within ``max_suppressed`` (None without
        ``local``, or when no refinement stays within it).
    nodes_evaluated : int
        Lattice nodes the global search evaluated.
    node : tuple of int
        The global recoding's level per observed column.
    """

    plan: Plan
    information_global: float
    information_local: float | None
    nodes_evaluated: int
    node: tuple[int, ...]

    def generalisation(self, space: ReleaseSpace) -> dict[str, Any]:
        """Per observed column: its level (global) or how many tuples sit at each level."""
        cols = space.table.observed
        if self.plan.kind == "global":
            return {
                c: {"level": int(self.node[j]), "levels": int(space.n_levels[j])}
                for j, c in enumerate(cols)
            }
        out: dict[str, Any] = {}
        for j, c in enumerate(cols):
            levels, counts = np.unique(self.plan.levels[:, j], return_counts=True)
            out[c] = {
                "levels": int(space.n_levels[j]),
                "tuples_at_level": {int(lv): int(k) for lv, k in zip(levels, counts, strict=True)},
            }
        return out


class Fitter:
    """Search (global, then local refinement) with one set of options on given counts.

    Parameters
    ----------
    space : ReleaseSpace
        The count table and the labels reachable from each of its tuples.
    options : SearchOptions
        Everything the search is asked to do; :attr:`box` is its lift test.
    """

    def __init__(self, space: ReleaseSpace, options: SearchOptions) -> None:
        self.space, self.options = space, options
        table = space.table
        self.box = LiftBox(
            table.total().sum(0),
            table.marginals(),
            options.epsilon,
            options.disclosure,
            options.confidence,
        )

    def fit(self, counts: FloatArray) -> Fit:
        """The best release of ``counts`` (rows: the space's tuples; columns: sensitive values).

        A local refinement is kept only when it keeps more information and its suppressed
        records (every column ``*``, :meth:`Plan.suppressed_records`) stay within
        ``max_suppressed``: refining the all-``*`` root can leave many records there. The
        search is deterministic, so a fit of these options and counts already made on this
        space is returned again (:meth:`ReleaseSpace.remember`): the held-out check of a
        release already searched, the frontier point of an epsilon the proposal searched.
        """
        digest = counts_digest(counts)
        return self.space.remember(
            (self.options, digest), lambda: self._search(counts, digest), lambda f: f.plan
        )

    def _refined(self, start: Plan, counts: FloatArray, digest: bytes) -> Plan:
        """:func:`~._local_recoding.refine_locally` of ``start``, kept on the space
        (:class:`~._memo.SearchMemo`): it depends on the start, the counts, the lift test and
        the minimum class size only, not on the suppression limit, so the alternatives that
        change that limit refine the same starts (the all-``*`` root at least) once."""
        key = (
            "refined",
            plan_digest(start),
            digest,
            self.box.signature,
            self.box.confidence,
            self.options.min_class_size,
        )
        states = b"".join([key[1], digest, str(self.options.min_class_size).encode()])
        return self.space.memo.refined(
            key,
            lambda: refine_locally(
                self.space, start, counts, self.box, self.options.min_class_size, states
            ),
        )

    def _search(self, counts: FloatArray, digest: bytes) -> Fit:
        o, space = self.options, self.space
        best, evaluated = search_global(
            space,
            counts,
            self.box,
            o.max_suppressed,
            max_nodes=o.max_nodes,
            min_class_size=o.min_class_size,
            digest=digest,
        )
        plan, value_local = best.plan, None
        if o.local:
            root = space.root
            # refining the root cannot beat a global release that keeps the finest information
            starts = [best.plan, root]
            if best.information >= finest_bound(space, counts) - 1e-12:
                starts = [best.plan]
            refined = (self._refined(p, counts, digest) for p in starts)
            budget = o.max_suppressed * float(counts.sum()) + 1e-9
            candidates = [p for p in refined if p.suppressed_records(counts) <= budget]
            values = [information(space, *release_cells(space, p), counts) for p in candidates]
            if values:
                i = int(np.argmax(values))
                value_local = values[i]
                if value_local > best.information + 1e-12:
                    plan = candidates[i]
        return Fit(plan, best.information, value_local, evaluated, best.levels)

    def plan(self, counts: FloatArray) -> Plan:
        """The release of ``counts`` alone (what the held-out check cross-fits)."""
        return self.fit(counts).plan


def in_sample_check(
    space: ReleaseSpace, box: LiftBox, plan: Plan, options: SearchOptions | None = None
) -> tuple[float, FloatArray]:
    """The worst log-lift of the released cells on all records, overall and per guarantee (the
    joint tuple, then each sensitive attribute).

    Raises if the release breaks its promise (never ship one that does): a cell, the suppressed
    one included, breaks epsilon; a row released as ``*`` everywhere is not counted as
    suppressed; and with ``options``, a cell other than the suppressed one holds fewer than
    ``min_class_size`` records, or the suppressed records exceed ``max_suppressed`` in a
    release that keeps any record out of the ``*`` cell.
    """
    total = space.table.total()
    cell_of, n_cells = release_cells(space, plan)
    ct = cell_counts(cell_of, n_cells, total)
    worst = float(box.worst(ct).max())
    problems = []
    if worst > box.epsilon + 1e-9:
        problems.append(f"it breaks epsilon ({worst:.6g} > {box.epsilon})")
    if (space.all_star(plan.levels) & ~plan.suppressed).any():
        problems.append("rows released as '*' everywhere are not counted as suppressed")
    if options is not None:
        n, sup = float(total.sum()), plan.suppressed_records(total)
        size = ct.sum(1)
        kept = np.bincount(cell_of, weights=(~plan.suppressed).astype(float), minlength=n_cells)
        small = (kept > 0) & (size > 0) & (size < options.min_class_size - 1e-9)
        if options.min_class_size > 1 and small.any():
            problems.append(f"a cell holds {size[small].min():g} < min_class_size records")
        if sup > options.max_suppressed * n + 1e-6 and sup < n - 1e-6:
            problems.append(f"it suppresses {sup:g} records, past max_suppressed")
    if problems:
        raise PrivwatchError(
            f"internal error: the searched release is invalid: {'; '.join(problems)}; please "
            "report it."
        )
    return worst, np.asarray(box.worst_by_group(ct).max(0), dtype=float)


def input_information(space: ReleaseSpace) -> float:
    """The information of the input itself (every tuple its own cell), in nats."""
    zero = np.zeros(space.table.codes.shape, dtype=np.int64)
    total = space.table.total()
    return information(space, *group_rows(space.keys(zero)), total)


def kept_information(space: ReleaseSpace, plan: Plan) -> float:
    """The information the release ``plan`` of all records keeps, in nats."""
    return information(space, *release_cells(space, plan), space.table.total())


def plan_digest(plan: Plan) -> bytes:
    """A digest of the release ``plan`` (its levels and suppressed rows), to remember what is
    computed from it."""
    return plan.digest()


def checked_release(space: ReleaseSpace, plan: Plan, box: LiftBox, rng: int) -> HeldOut:
    """The held-out check of the release ``plan`` with the lift test ``box``
    (:func:`~._held_out.held_out_check` without cross-fitting, its draws seeded by ``rng``).

    Without cross-fitting the check depends on the release, epsilon, disclosure and seed alone
    (not on the credible margin or the other search options), so one check per release is
    remembered on ``space`` and reused by the margins, the frontier and the alternatives that
    end at the same release. The fold searches would give only the plug-in figures (NaN here,
    null in leakage.json); the estimate, its interval and so the verdict are the same without
    them.
    """
    key = _check_key(plan, box, rng)
    return space.remember(key, lambda: _check(space, plan, box, rng).figures())


def check_fails(space: ReleaseSpace, plan: Plan, box: LiftBox, rng: int, tolerance: float) -> bool:
    """Whether the held-out check of ``plan`` (:func:`checked_release`) fails at ``tolerance``
    (:func:`~privwatch.release.heldout.held_out_fails`), for a release whose figures are not
    published (a credible margin the search goes past).

    The interval is drawn only when the point estimate does not decide: its upper end is at
    least the estimate, so an estimate above the tolerance fails whatever the draws. The
    estimate is the one :func:`checked_release` reports (the same steps:
    :class:`~._held_out.HeldOutCheck`), and is remembered, like the figures when they are
    drawn, so a later :func:`checked_release` of the same release gives what it gives
    without this call."""
    key = _check_key(plan, box, rng)
    held = space.recall(key)
    if isinstance(held, HeldOut):
        return held_out_fails(held, tolerance)
    estimate = space.recall(("estimate", *key))
    if isinstance(estimate, float) and estimate > tolerance:
        return True
    check = _check(space, plan, box, rng)
    if check.estimate > tolerance:
        space.remember(("estimate", *key), lambda: check.estimate)
        return True
    return held_out_fails(space.remember(key, check.figures), tolerance)


def _check_key(plan: Plan, box: LiftBox, rng: int) -> tuple[object, ...]:
    return ("held", plan_digest(plan), box.epsilon, box.disclosure, rng)


def _check(space: ReleaseSpace, plan: Plan, box: LiftBox, rng: int) -> HeldOutCheck:
    return HeldOutCheck(
        space,
        space.table,
        lambda _counts: plan,
        box,
        rng=np.random.default_rng(rng),
        cross_fit=False,
    )
