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
ladder does. The first rung met is returned; when none is, the last one tried (the most
protective), not met, with every rung's figures in ``tried`` for the alternatives.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..cells import LiftBox, cell_counts, entropy_of_sizes, table_protection
from ..heldout import NOTHING_KEPT, HeldOut, estimate_breach, held_out_verdict, not_met_reasons
from ..search import MARGINS
from ._partition import cells_of, flag_tuples, relaxed_keep
from ._units import TupleUnits

__all__ = ["BUDGET_SHARES", "MergedRelease", "Rung", "merge_to_pass", "rungs"]

BoolArray = NDArray[np.bool_]

#: Shares of delta the relaxed watchdog's exemptions may spend in-sample, tried in turn at each
#: margin: the exempted tuples break in-sample, and the kept ones may break on fresh records, so
#: the whole of delta spent in-sample can leave the held-out interval above delta.
BUDGET_SHARES = (1.0, 0.5, 0.0)


@dataclass(frozen=True)
class Rung:
    """One partition's settings: the flags' credible ``confidence`` (None: plug-in) and the
    share of records the exemptions may breach in-sample (``budget``; 0: the watchdog)."""

    confidence: float | None
    budget: float


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
    for rung in rungs(delta) if aim else rungs(delta)[:1]:
        keep = _keep(units, rung, request, epsilon_max)
        if keep.tobytes() in seen:
            continue  # the same release as a rung already judged
        seen.add(keep.tobytes())
        found = _judge(units, keep, rung, request, tolerance, rng)
        tried.append(_figures(found))
        if found.satisfied or found.information_nats <= NOTHING_KEPT:
            break
    assert found is not None
    return replace(found, tried=tried)
