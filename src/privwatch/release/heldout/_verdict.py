"""Whether a release meets what was asked, and why not: the verdict rule and its constants,
written once.

A release is **met** when all of these hold:

1. it keeps information (more than :data:`NOTHING_KEPT` nats: not every record released as
   ``*``);
2. its guarantee protects at least one sensitive value (a one-sided guarantee with
   :math:`p(s) e^{\\epsilon} \\ge 1` for every value says nothing about anyone:
   :func:`privwatch.release.cells.table_protection`);
3. every released cell meets epsilon on the fitted records (verified exactly by the search);
4. on records the release was not fitted on, the 95 % interval of the share of the population
   in a cell that breaks epsilon lies at or below the tolerance (its **upper** end;
   :data:`TOLERANCE` unless the caller says otherwise): the held-out evidence must show the
   guarantee holds, not merely fail to show it breaks.

Otherwise it is not met, and the reason says whether a held-out breach is *confirmed* (the
interval's lower end is above the tolerance) or the held-out evidence is *too thin* to call it
met (the interval straddles the tolerance): :func:`verdict_rule`.

The interval is estimated with :data:`DRAWS` Monte Carlo draws over :data:`REPLICATES` draws of
the prior (:func:`~privwatch.release.heldout.estimate_breach`), the same for a release the
audit searched, one of its alternatives and one ``privwatch check`` judges.

The rule reads only the figures it needs (:class:`Figures`: a
:class:`~privwatch.release.heldout.HeldOut` has them) and the request's epsilon, disclosure and
suppression limit (:class:`Request`: a :class:`~privwatch.release.search.SearchOptions` has
them), so it depends on neither the estimator nor the search.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..cells import unprotected

__all__ = [
    "DRAWS",
    "FOLDS",
    "NOTHING_KEPT",
    "REPLICATES",
    "TOLERANCE",
    "VERDICTS",
    "Figures",
    "Request",
    "held_out_fails",
    "held_out_verdict",
    "not_met_reasons",
    "verdict_rule",
]

#: Information (nats) at or below which a release keeps nothing (every record in one cell).
NOTHING_KEPT = 1e-9
#: The tolerated share of the population in a released cell that breaks epsilon, by default.
TOLERANCE = 0.05
#: The folds of the held-out check, by default (each fold's records are held out once).
FOLDS = 5
#: Monte Carlo draws of the breach share behind its 95 % interval.
DRAWS = 2000
#: Draws of the prior (its family, G and p(s)) the interval's draws are spread over.
REPLICATES = 20
#: What the held-out check can say: shown to hold, a confirmed breach, or too thin evidence.
VERDICTS = ("met", "breach", "inconclusive")


class Figures(Protocol):
    """The held-out figures the rule reads (a :class:`~privwatch.release.heldout.HeldOut`)."""

    @property
    def breach_probability(self) -> float: ...

    @property
    def breach_probability_ci(self) -> tuple[float, float]: ...


class Request(Protocol):
    """What a release was asked for (a :class:`~privwatch.release.search.SearchOptions`)."""

    @property
    def epsilon(self) -> float: ...

    @property
    def disclosure(self) -> str: ...

    @property
    def max_suppressed(self) -> float: ...


def verdict_rule(interval: tuple[float, float], tolerance: float = TOLERANCE) -> str:
    """The held-out verdict of a breach share's 95 % ``interval``: ``"met"`` when its upper end
    is within ``tolerance``, ``"breach"`` when its lower end is above it (confirmed),
    ``"inconclusive"`` otherwise.

    Examples
    --------
    >>> verdict_rule((0.0, 0.04)), verdict_rule((0.06, 0.2)), verdict_rule((0.01, 0.06))
    ('met', 'breach', 'inconclusive')
    """
    lo, hi = interval
    if hi <= tolerance:
        return "met"
    return "breach" if lo > tolerance else "inconclusive"


def held_out_verdict(held: Figures | None, tolerance: float) -> str | None:
    """``"met"`` (interval's upper end <= tolerance), ``"breach"`` (lower end > tolerance),
    ``"inconclusive"`` (it straddles the tolerance), or None without a held-out check."""
    return None if held is None else verdict_rule(held.breach_probability_ci, tolerance)


def held_out_fails(held: Figures | None, tolerance: float) -> bool:
    """Whether the held-out check does not show the guarantee holds (see the module rules)."""
    return held_out_verdict(held, tolerance) in ("breach", "inconclusive")


def not_met_reasons(
    options: Request,
    information_nats: float,
    held: Figures | None,
    tolerance: float,
    protection: list[dict[str, Any]],
) -> list[str]:
    """Why the release does not meet the request (empty when it does; see the module rules)."""
    reasons: list[str] = []
    if information_nats <= NOTHING_KEPT:
        reasons.append(
            f"no release within `max_suppressed`={options.max_suppressed:g} keeps any "
            f"information at epsilon {options.epsilon:g} ({options.disclosure}): every record "
            f"would be released as '*'"
        )
    lost = unprotected(protection)
    if protection and len(lost) == len(protection):
        reasons.append(
            f"`disclosure`='{options.disclosure}' at epsilon {options.epsilon:g} protects no "
            "sensitive value: for each, p(s) e^epsilon >= 1, so the guarantee allows an "
            "adversary to become certain of it (use `disclosure`='both', or a smaller epsilon)"
        )
    verdict = held_out_verdict(held, tolerance)
    if held is not None and verdict != "met" and information_nats > NOTHING_KEPT:
        lo, hi = held.breach_probability_ci
        figure = (
            f"on records the release was not fitted on, an estimated "
            f"{held.breach_probability:.1%} of the population falls in a released cell that "
            f"breaks epsilon (95 % interval {lo:.1%}-{hi:.1%})"
        )
        if verdict == "breach":
            reasons.append(f"{figure}: a breach, confirmed above the tolerance {tolerance:.0%}")
        else:
            reasons.append(
                f"{figure}: the interval reaches above the tolerance {tolerance:.0%}, so the "
                "held-out evidence is too thin to call the guarantee met"
            )
    return reasons
