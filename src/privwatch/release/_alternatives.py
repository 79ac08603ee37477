"""The nearest settings to try when a release is not met, each searched as the user's own.

Every alternative changes one option of the user's :class:`SearchOptions` (a larger epsilon,
one-sided disclosure, a larger suppression limit) and keeps all the others, so it is the release
:func:`~privwatch.release.find_release` gives at those settings, number for number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._fitter import Fitter, kept_information
from ._heldout import HeldOut
from ._options import SearchOptions
from ._search import ReleaseSpace
from ._verdict import NOTHING_KEPT, held_out_fails

__all__ = ["Alternative", "empty_release_alternatives", "held_out_alternatives", "suggest"]

#: Suppression limits an empty release tries, smallest first (those above the user's).
SUPPRESSION_STEPS = (0.1, 0.2, 0.3, 0.5)
#: Factors of epsilon a release that fails on held-out records tries.
EPSILON_STEPS = (1.5, 2.0, 3.0)


@dataclass(frozen=True)
class Alternative:
    """One setting to try instead of the user's, with what it keeps.

    Attributes
    ----------
    options : SearchOptions
        The exact options the alternative was searched with.
    changed : {"epsilon", "disclosure", "max_suppressed"}
        The one option it changes.
    information_nats : float
        Information its release keeps.
    suppressed_share : float or None
        The share of the records it suppresses, where quoted.
    held_out : HeldOut or None
        Its held-out figures, where checked.
    """

    options: SearchOptions
    changed: str
    information_nats: float
    suppressed_share: float | None = None
    held_out: HeldOut | None = None

    def describe(self, tolerance: float) -> str:
        """One line of advice; options are named as Python parameters (in backticks)."""
        o, kept = self.options, f"keeps {self.information_nats:.2f} nats"
        if self.held_out is not None:
            h = self.held_out
            lo, hi = h.breach_probability_ci
            verdict = "still above" if held_out_fails(h, tolerance) else "within"
            return (
                f"epsilon {o.epsilon:g} with `disclosure`='{o.disclosure}': {kept}; held-out "
                f"breach {h.breach_probability:.1%} (95 % {lo:.1%}-{hi:.1%}), {verdict} "
                f"the tolerance"
            )
        if self.changed == "epsilon":
            return (
                f"raise epsilon to {o.epsilon:g}: {kept} with {self.suppressed_share:.1%} of the "
                f"records suppressed"
            )
        if self.changed == "max_suppressed":
            return f"allow `max_suppressed`={o.max_suppressed:g}: {kept} at epsilon {o.epsilon:g}"
        return (
            f"use `disclosure`='{o.disclosure}' (beliefs may not grow by more than e^epsilon): "
            f"{kept} at epsilon {o.epsilon:g}"
        )


def held_out_alternatives(
    space: ReleaseSpace, options: SearchOptions, rng: int
) -> list[Alternative]:
    """Settings whose held-out breach may be lower: one-sided disclosure at the same epsilon
    (when two-sided), then larger epsilons; each checked on held-out records like the release."""
    tries = [("epsilon", options.replace(epsilon=options.epsilon * f)) for f in EPSILON_STEPS]
    if options.disclosure == "both":
        tries.insert(0, ("disclosure", options.replace(disclosure="positive")))
    out = []
    for changed, tried in tries:
        fitter = Fitter(space, tried)
        held = fitter.held_out(rng)
        kept = kept_information(space, fitter.plan(space.table.total()))
        out.append(Alternative(tried, changed, kept, held_out=held))
    return out


def empty_release_alternatives(
    space: ReleaseSpace, options: SearchOptions, frontier: list[dict[str, Any]]
) -> list[Alternative]:
    """For a release that keeps nothing: the smallest epsilon of the frontier that keeps
    something, the smallest larger suppression limit that does, and one-sided disclosure."""
    out = []
    kept = [p for p in frontier if p["information_nats"] > NOTHING_KEPT]
    if kept:
        p = min(kept, key=lambda q: q["epsilon"])
        raised = options.replace(epsilon=p["epsilon"])
        out.append(Alternative(raised, "epsilon", p["information_nats"], p["suppressed_share"]))
    total = space.table.total()
    for share in SUPPRESSION_STEPS:
        if share <= options.max_suppressed:
            continue
        tried = options.replace(max_suppressed=share)
        value = kept_information(space, Fitter(space, tried).plan(total))
        if value > NOTHING_KEPT:
            out.append(Alternative(tried, "max_suppressed", value))
            break
    if options.disclosure == "both":
        tried = options.replace(disclosure="positive")
        value = kept_information(space, Fitter(space, tried).plan(total))
        out.append(Alternative(tried, "disclosure", value))
    return out


def suggest(
    space: ReleaseSpace,
    options: SearchOptions,
    information_nats: float,
    held: HeldOut | None,
    tolerance: float,
    frontier: list[dict[str, Any]],
    rng: int,
) -> list[Alternative]:
    """The alternatives to a release that is not met (none for one that is)."""
    if information_nats <= NOTHING_KEPT:
        return empty_release_alternatives(space, options, frontier)
    if held_out_fails(held, tolerance):
        return held_out_alternatives(space, options, rng)
    return []
