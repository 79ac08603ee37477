"""A watchdog release aimed at the held-out verdict: margins grown until the check passes.

The search's rule, for a partition of the observed tuples (kept tuples, one cell each; the rest
merged into ``*`` with every tuple never seen): the partition is built at a :class:`Rung` (a
credible ``confidence`` for the flags, None = plug-in, and a ``budget`` for the exemptions of
the (epsilon, delta) relaxation, 0 = none), its held-out breach share estimated with its 95 %
interval (:func:`~privwatch.release.heldout.estimate_breach`, the search's model of p(s | x) for
given cells) and judged by the one verdict rule
(:func:`~privwatch.release.heldout.not_met_reasons`: nothing kept, no value protected, or the
interval's upper end above the tolerance). While it is not met, the next rung is tried:
the relaxed watchdog first halves, then drops its exemption budget, then the flags take the
next credible margin (:data:`~privwatch.release.search.MARGINS`), as the search's margin
ladder does. The first rung met is returned.

When no rung is met, the most protective rung that still keeps something, then the first rung
(the plug-in flags: the most tuples kept), is **narrowed** (:data:`KEPT_SHARES`, halved in
turn): only its safest kept tuples, within that share of its kept records, are released, the
rest merged too. A margin flags every tuple too small to show its shares credibly within the
box, so on a rare value (a 1 % share, two-sided: its lower face needs hundreds of records) the
margin after an inconclusive rung often merges everything, a release that keeps nothing, though
a smaller kept set is met: where the prior's replicates disagree on a rare value's spread, every
kept tuple may break together in some replicate, and the interval's upper end is then about
the kept share whatever the tuples' counts. The kept tuples are taken in the order of the
held-out model's posterior probability P_x that the tuple breaks epsilon under the fitted prior
(:attr:`~privwatch.release.heldout.BreachCheck.cell_breach`, to 0.001), then of size (larger
first: a tuple of n records is known to 1/sqrt(n)), a tuple that does not fit passed over. The
narrowed release is judged by the same held-out check as every rung (its interval drawn over
the prior's replicates). When none is met either, the last rung of the ladder is returned (the
most protective), not met, with every rung's figures in ``tried`` for the alternatives.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..cells import LiftBox, cell_counts, entropy_of_sizes, table_protection
from ..heldout import (
    NOTHING_KEPT,
    BreachCheck,
    HeldOut,
    estimate_breach,
    held_out_verdict,
    not_met_reasons,
)
from ..search import MARGINS
from ._partition import cells_of, flag_tuples, relaxed_keep
from ._units import TupleUnits

__all__ = ["BUDGET_SHARES", "KEPT_SHARES", "MergedRelease", "Rung", "merge_to_pass", "rungs"]

BoolArray = NDArray[np.bool_]

#: Shares of delta the relaxed watchdog's exemptions may spend in-sample, tried in turn at each
#: margin: the exempted tuples break in-sample, and the kept ones may break on fresh records, so
#: the whole of delta spent in-sample can leave the held-out interval above delta.
BUDGET_SHARES = (1.0, 0.5, 0.0)
#: Shares of the kept records a narrowed rung keeps (its safest tuples), tried in turn when no
#: rung of the ladder is met (module docstring): halved down to 1/64.
KEPT_SHARES = tuple(0.5**k for k in range(1, 7))


@dataclass(frozen=True)
class Rung:
    """One partition's settings: the flags' credible ``confidence`` (None: plug-in), the
    share of records the exemptions may breach in-sample (``budget``; 0: the watchdog) and the
    share of the kept records released (``kept_share``: the largest tuples; 1: all)."""

    confidence: float | None
    budget: float
    kept_share: float = 1.0


def rungs(delta: float | None) -> list[Rung]:
    """The ladder: plug-in flags, then each margin of the search; with ``delta``, at each
    margin the budgets ``delta`` x :data:`BUDGET_SHARES`."""
    levels: tuple[float | None, ...] = (None, *MARGINS)
    shares = (0.0,) if not delta else BUDGET_SHARES
    return [Rung(q, share * (delta or 0.0)) for q in levels for share in shares]


@dataclass(frozen=True)
class _Request:
    """What the verdict rule reads of the request (:class:`~..heldout.Request`)."""

    epsilon: float
    disclosure: str
    max_suppressed: float = 1.0


@dataclass(frozen=True)
class MergedRelease:
    """A watchdog release and its verdict.

    ``keep``: per tuple row of ``units.table``, True when released unchanged; ``held``: the
    held-out figures (None without folds or when nothing is kept); ``breach_in_sample``: the
    share of the records in a released cell that breaks epsilon (plug-in); ``effective_epsilon``:
    the worst plug-in |log-lift| (one-sided: log-lift) of a released cell; ``protection``: per
    sensitive value, what the guarantee promises; ``reasons``: why it is not met (empty: met);
    ``tried``: every rung's figures, in order."""

    units: TupleUnits
    keep: BoolArray
    rung: Rung
    epsilon: float
    disclosure: str
    tolerance: float
    held: HeldOut | None
    information_nats: float
    information_input_nats: float
    breach_in_sample: float
    effective_epsilon: float
    protection: list[dict[str, Any]]
    reasons: list[str]
    tried: list[dict[str, Any]] = field(default_factory=list)

    @property
    def satisfied(self) -> bool:
        return not self.reasons

    @property
    def verdict(self) -> str | None:
        """The held-out verdict (``met``, ``breach``, ``inconclusive``; None without one)."""
        return held_out_verdict(self.held, self.tolerance)

    def record_flags(self) -> BoolArray:
        """Per record: True when merged into ``*``."""
        return np.asarray(~self.keep[self.units.row_of], dtype=bool)

    def reasons_at(self, tolerance: float) -> list[str]:
        """The reasons this release would have at another tolerance (the rule, re-read)."""
        return _reasons(
            _Request(self.epsilon, self.disclosure), self.information_nats, self.held,
            tolerance, self.protection, self.breach_in_sample,
        )  # fmt: skip


def _reasons(
    request: _Request,
    info: float,
    held: HeldOut | None,
    tolerance: float,
    protection: list[dict[str, Any]],
    breach_in_sample: float,
) -> list[str]:
    reasons = not_met_reasons(request, info, held, tolerance, protection)
    if breach_in_sample > tolerance + 1e-12 and info > NOTHING_KEPT:
        reasons.append(
            f"on the audited records, {breach_in_sample:.1%} of them fall in a released cell "
            f"that breaks epsilon {request.epsilon:g} (the merged cell), above the tolerance "
            f"{tolerance:.0%}"
        )
    return reasons


def _keep(units: TupleUnits, rung: Rung, request: _Request, epsilon_max: float) -> BoolArray:
    """The tuples released unchanged at ``rung`` (flags at its margin, exemptions within its
    budget)."""
    total = units.table.total()
    box = units.box(request.epsilon, request.disclosure, rung.confidence)
    flags = flag_tuples(total, box)
    if rung.budget <= 0:
        return ~flags
    cap: LiftBox | None = units.box(epsilon_max, "both") if np.isfinite(epsilon_max) else None
    return relaxed_keep(total, flags, box, rung.budget, cap)


def _judge(
    units: TupleUnits,
    keep: BoolArray,
    rung: Rung,
    request: _Request,
    tolerance: float,
    rng: int,
) -> MergedRelease:
    """The figures and the verdict of one partition."""
    total = units.table.total()
    n = float(total.sum())
    plain = units.box(request.epsilon, request.disclosure)
    cell_of, n_cells, star = cells_of(keep)
    cells = cell_counts(cell_of, n_cells, total)
    sizes = cells.sum(1)
    live = sizes > 0
    breaking = np.zeros(n_cells, dtype=bool)
    breaking[live] = plain.breaks(cells[live])
    worst = float(plain.worst(cells[live]).max()) if live.any() else 0.0
    info = entropy_of_sizes(sizes, n)
    held = None
    if units.n_folds >= 2 and info > NOTHING_KEPT:
        held = estimate_breach(
            units.table, plain, [], (cell_of, n_cells, star),
            (float("nan"), float("nan"), units.table.n_records), rng=np.random.default_rng(rng),
        )  # fmt: skip
    protection = table_protection(units.table, request.epsilon, request.disclosure)
    in_sample = float(sizes[breaking].sum() / n)
    return MergedRelease(
        units, keep, rung, request.epsilon, request.disclosure, tolerance, held, info,
        entropy_of_sizes(total.sum(1), n), in_sample, worst, protection,
        _reasons(request, info, held, tolerance, protection, in_sample),
    )  # fmt: skip


def _figures(found: MergedRelease) -> dict[str, Any]:
    held = found.held
    return {
        "confidence": found.rung.confidence,
        "budget": found.rung.budget,
        **({} if found.rung.kept_share >= 1 else {"kept_share": found.rung.kept_share}),
        "information_nats": found.information_nats,
        "merged_records": int(found.record_flags().sum()),
        "breach_in_sample": found.breach_in_sample,
        "held_out": None
        if held is None
        else {"estimate": held.breach_probability, "interval": list(held.breach_probability_ci)},
        "verdict": found.verdict,
        "met": found.satisfied,
    }


def merge_to_pass(
    units: TupleUnits,
    epsilon: float,
    disclosure: str,
    *,
    tolerance: float,
    delta: float | None = None,
    epsilon_max: float = float("inf"),
    rng: int = 0,
    aim: bool = True,
) -> MergedRelease:
    """The watchdog (``delta`` None) or its (epsilon, delta) relaxation on ``units``, walked up
    :func:`rungs` until the release is met (``aim``; without, the first rung only). See the
    module docstring; the interval's draws come from ``rng``, so one partition always gets one
    interval."""
    request = _Request(float(epsilon), disclosure)
    tried: list[dict[str, Any]] = []
    seen: set[bytes] = set()
    found: MergedRelease | None = None
    kept: list[MergedRelease] = []  # the rungs judged that keep something, in order
    for rung in rungs(delta) if aim else rungs(delta)[:1]:
        keep = _keep(units, rung, request, epsilon_max)
        if keep.tobytes() in seen:
            continue  # the same release as a rung already judged
        seen.add(keep.tobytes())
        found = _judge(units, keep, rung, request, tolerance, rng)
        tried.append(_figures(found))
        if found.satisfied or found.information_nats <= NOTHING_KEPT:
            break
        kept.append(found)
    assert found is not None
    if not aim or found.satisfied or not kept:
        return replace(found, tried=tried)
    plain = units.box(request.epsilon, request.disclosure)
    for pool in (kept[-1], kept[0]) if len(kept) > 1 else (kept[0],):
        cell_of, n_cells, star = cells_of(pool.keep)
        p_tuple = BreachCheck(units.table, plain, (cell_of, n_cells, star)).cell_breach[cell_of]
        for share in KEPT_SHARES:
            keep = _safest(units, pool.keep, p_tuple, share)
            if not keep.any():
                break
            if keep.tobytes() in seen:
                continue
            seen.add(keep.tobytes())
            narrowed = _judge(units, keep, replace(pool.rung, kept_share=share), request,
                              tolerance, rng)  # fmt: skip
            tried.append(_figures(narrowed))
            if narrowed.satisfied:
                return replace(narrowed, tried=tried)
    return replace(found, tried=tried)


def _safest(
    units: TupleUnits, keep: BoolArray, p_tuple: NDArray[np.float64], share: float
) -> BoolArray:
    """The tuples of ``keep`` taken in the order of ``p_tuple`` (to 0.001, lowest first), then
    size (largest first), then row, each while the records taken stay within ``share`` of
    those ``keep`` holds (one that would not fit is passed over)."""
    size = units.table.total().sum(1)
    rows = np.flatnonzero(keep)
    rows = rows[np.lexsort((-size[rows], np.round(p_tuple[rows], 3)))]
    room = share * float(size[rows].sum()) + 1e-9
    out = np.zeros_like(keep)
    for x in rows.tolist():
        if size[x] <= room:
            out[x] = True
            room -= float(size[x])
    return out
