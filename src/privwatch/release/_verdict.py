"""Whether a release meets what was asked, and why not: the verdict rules, written once."""

from __future__ import annotations

from ._heldout import HeldOut
from ._options import SearchOptions

__all__ = ["held_out_fails", "not_met_reasons"]

#: Information (nats) at or below which a release keeps nothing (every record in one cell).
NOTHING_KEPT = 1e-9


def held_out_fails(held: HeldOut | None, tolerance: float) -> bool:
    """Whether the held-out breach share's 95 % interval lies above ``tolerance``."""
    return held is not None and held.breach_probability_ci[0] > tolerance


def not_met_reasons(
    options: SearchOptions, information_nats: float, held: HeldOut | None, tolerance: float
) -> list[str]:
    """Why the release does not meet the request (empty when it does).

    Not met when it keeps no information (every record would be released as ``*``), or when on
    held-out records it breaks epsilon for a share whose 95 % interval lies above ``tolerance``.
    """
    reasons: list[str] = []
    if information_nats <= NOTHING_KEPT:
        reasons.append(
            f"no release within `max_suppressed`={options.max_suppressed:g} keeps any "
            f"information at epsilon {options.epsilon:g} ({options.disclosure}): every record "
            f"would be released as '*'"
        )
    if held is not None and held_out_fails(held, tolerance):
        lo, hi = held.breach_probability_ci
        reasons.append(
            f"on held-out records the release breaks epsilon for {held.breach_probability:.1%} "
            f"of them (95 % interval {lo:.1%}-{hi:.1%}), above the tolerance {tolerance:.0%}"
        )
    return reasons
