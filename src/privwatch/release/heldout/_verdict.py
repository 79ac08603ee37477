"""Whether a release meets what was asked, and why not: the verdict rules, written once.

A release is **met** when all of these hold:

1. it keeps information (not every record released as ``*``);
2. its guarantee protects at least one sensitive value (a one-sided guarantee with
   :math:`p(s) e^{\\epsilon} \\ge 1` for every value says nothing about anyone:
   :mod:`~privwatch.release._protection`);
3. every released cell meets epsilon on the fitted records (verified exactly by the search);
4. on records the release was not fitted on, the 95 % interval of the share of the population
   in a cell that breaks epsilon lies at or below the tolerance (its **upper** end): the
   held-out evidence must show the guarantee holds, not merely fail to show it breaks.

Otherwise it is not met, and the reason says whether a held-out breach is *confirmed* (the
interval's lower end is above the tolerance) or the held-out evidence is *too thin* to call it
met (the interval straddles the tolerance).
"""

from __future__ import annotations

from typing import Any

from ._heldout import HeldOut
from ._options import SearchOptions
from ._protection import unprotected

__all__ = ["NOTHING_KEPT", "held_out_fails", "held_out_verdict", "not_met_reasons"]

#: Information (nats) at or below which a release keeps nothing (every record in one cell).
NOTHING_KEPT = 1e-9


def held_out_verdict(held: HeldOut | None, tolerance: float) -> str | None:
    """``"met"`` (interval's upper end <= tolerance), ``"breach"`` (lower end > tolerance),
    ``"inconclusive"`` (it straddles the tolerance), or None without a held-out check."""
    return None if held is None else held.verdict(tolerance)


def held_out_fails(held: HeldOut | None, tolerance: float) -> bool:
    """Whether the held-out check does not show the guarantee holds (see the module rules)."""
    return held_out_verdict(held, tolerance) in ("breach", "inconclusive")


def not_met_reasons(
    options: SearchOptions,
    information_nats: float,
    held: HeldOut | None,
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
