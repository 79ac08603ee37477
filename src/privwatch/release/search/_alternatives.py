"""The nearest settings to try when a release is not met, each searched as the user's own.

Every alternative changes one option of the user's :class:`SearchOptions` (a larger epsilon,
one-sided disclosure, a larger suppression limit) and keeps all the others; its release is the
one :func:`~privwatch.release.find_release` publishes at those settings
(:meth:`~._frontier.Releases.at`: searched with the margin grown until the held-out check
passes, the releases searched at smaller epsilons candidates too), so running the audit with its
``args`` gives the release it describes, and one at a frontier epsilon is that frontier point.
An alternative is **feasible** when that release is met by the rules of
:mod:`~privwatch.release.heldout` and leaves unprotected no sensitive value that the request
protected. They are ranked strongest privacy first: smaller epsilon, then two-sided before
one-sided, then less suppression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cells import table_protection
from ..heldout import NOTHING_KEPT, TOLERANCE, HeldOut, held_out_verdict
from ._frontier import Releases
from ._options import SearchOptions

__all__ = ["Alternative", "suggest"]

#: Suppression limits tried, smallest first (those above the user's).
SUPPRESSION_STEPS = (0.1, 0.2)
#: Factors of epsilon tried.
EPSILON_STEPS = (1.5, 2.0, 3.0)


@dataclass(frozen=True)
class Alternative:
    """One setting to try instead of the user's, with the release it gives.

    Attributes
    ----------
    options : SearchOptions
        The options asked for (``args``: what to pass to the audit).
    changed : {"epsilon", "disclosure", "max_suppressed"}
        The option it changes.
    information_nats : float
        Information its release keeps.
    held_out : HeldOut or None
        Its held-out figures.
    feasible : bool
        Met, and no value the request protected left unprotected.
    unprotected : list of str
        Sensitive values its guarantee says nothing about (``attribute=value``).
    reasons : list of str
        Why it is not met (empty when it is).
    tolerance : float
        The held-out tolerance it was judged with.
    searched_epsilon : float or None
        The epsilon its release was searched at (at most its own: :mod:`~._frontier`).
    """

    options: SearchOptions
    changed: str
    information_nats: float
    held_out: HeldOut | None
    feasible: bool
    unprotected: list[str]
    reasons: list[str]
    tolerance: float = TOLERANCE
    searched_epsilon: float | None = None

    def describe(self) -> str:
        """One line of advice; options named as Python parameters (in backticks)."""
        o = self.options
        text = f"`epsilon`={o.epsilon:.4g} `disclosure`='{o.disclosure}'"
        if self.changed == "max_suppressed":
            text += f" `max_suppressed`={o.max_suppressed:g}"
        text += f": keeps {self.information_nats:.2f} nats"
        if self.searched_epsilon is not None and self.searched_epsilon != o.epsilon:
            text += f" (the release found at epsilon {self.searched_epsilon:.4g})"
        if self.held_out is not None:
            h = self.held_out
            lo, hi = h.breach_probability_ci
            text += f"; held-out breach {h.breach_probability:.1%} (95 % {lo:.1%}-{hi:.1%})"
        if self.unprotected:
            text += f"; says nothing about {', '.join(self.unprotected)}"
        if self.feasible:
            return text
        return f"{text} (not feasible: {self.why_not()})"

    def why_not(self) -> str:
        """Why the alternative is not feasible, in a few words (empty when it is)."""
        if self.feasible:
            return ""
        if self.information_nats <= NOTHING_KEPT:
            return "keeps nothing"
        verdict = held_out_verdict(self.held_out, self.tolerance)
        if verdict == "breach":
            return "a held-out breach above the tolerance"
        if verdict == "inconclusive":
            return "held-out evidence too thin"
        if self.unprotected:
            return "it leaves a value the request protected unprotected"
        return "; ".join(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        """The ``alternatives`` entry of leakage.json (``args``: the exact options to pass)."""
        held = self.held_out
        return {
            "epsilon": self.options.epsilon,
            "disclosure": self.options.disclosure,
            "changed": self.changed,
            "args": self.options.arguments(),
            "information_nats": self.information_nats,
            "held_out": None
            if held is None
            else {
                "estimate": held.breach_probability,
                "interval": list(held.breach_probability_ci),
            },
            "searched_epsilon": self.searched_epsilon,
            "feasible": self.feasible,
            "unprotected": list(self.unprotected),
            "description": self.describe(),
        }


def _evaluate(
    releases: Releases, tried: SearchOptions, changed: str, protected: set[str]
) -> Alternative:
    """The release published at ``tried`` (:meth:`~._frontier.Releases.at`, with the same
    candidate epsilons as the run's frontier)."""
    if (tried.disclosure, tried.max_suppressed) != (
        releases.options.disclosure,
        releases.options.max_suppressed,
    ):
        releases = releases.with_options(tried)
    chosen = releases.at(tried.epsilon)
    found, tolerance = chosen.found, releases.tolerance
    protection = table_protection(releases.space.table, tried.epsilon, tried.disclosure)
    lost = [f"{r['attribute']}={r['value']}" for r in protection if not r["protected"]]
    feasible = not chosen.reasons and not protected.intersection(lost)
    return Alternative(
        tried, changed, found.information_nats, found.held, feasible, lost, chosen.reasons,
        tolerance, chosen.searched_epsilon,
    )  # fmt: skip


def suggest(
    releases: Releases,
    wanted: int = 2,
    frontier: list[dict[str, Any]] | None = None,
) -> list[Alternative]:
    """The alternatives to the user's options (``releases.options``), strongest privacy first,
    tried in that order until ``wanted`` are feasible (:attr:`Alternative.feasible` says which
    may be offered)."""
    options, space = releases.options, releases.space
    protection = table_protection(space.table, options.epsilon, options.disclosure)
    protected = {f"{r['attribute']}={r['value']}" for r in protection if r["protected"]}
    factors = {options.epsilon * f for f in EPSILON_STEPS}
    # the frontier's smallest epsilon whose release keeps something (a release that keeps nothing)
    keeps = [p["epsilon"] for p in frontier or [] if p["information_nats"] > NOTHING_KEPT]
    factors |= {e for e in keeps if e > options.epsilon}
    tries = [("epsilon", options.replace(epsilon=e)) for e in sorted(factors)]
    if options.disclosure == "both":
        tries.append(("disclosure", options.replace(disclosure="positive")))
    tries += [
        ("max_suppressed", options.replace(max_suppressed=s))
        for s in SUPPRESSION_STEPS
        if s > options.max_suppressed
    ]
    tries.sort(key=lambda t: (t[1].epsilon, t[1].disclosure == "positive", t[1].max_suppressed))
    out: list[Alternative] = []
    for changed, tried in tries:
        out.append(_evaluate(releases, tried, changed, protected))
        if sum(a.feasible for a in out) >= wanted:
            break
    return out
