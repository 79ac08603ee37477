"""One release per epsilon, monotone in epsilon: the published release, its frontier and the
alternatives are all chosen here.

A release that meets epsilon-lift privacy at epsilon e' also meets it at every e >= e'
(|log p(s|y)/p(s)| <= e' <= e, Hsu et al., Def. 1; likewise one-sided), so the release the
audit publishes at e is the best of these candidates, each judged at e:

- the release searched at e itself (:func:`~._margin.search_to_pass`: the user's options, the
  credible margin grown until its held-out check passes);
- the release searched the same way at each epsilon of the ladder below e (:data:`LADDER`, the
  default frontier's epsilons) and at the other epsilons of the same run below e (the
  requested one and the frontier's), with the same disclosure, suppression limit and
  tolerance.

A candidate searched at e' < e is judged at e: its held-out check is made again with the lift
test at e (fewer cells break a larger epsilon) and the verdict rule of
:mod:`privwatch.release.heldout` applied there. Best means, in order: met (no reason of
:func:`~privwatch.release.heldout.not_met_reasons`), then the better held-out verdict
(met, inconclusive, breach), then the most information kept; a tie keeps the release searched
at e. Judged at a larger epsilon, a fixed release keeps its information and its breach share
can only fall, so along the frontier (met, verdict, information) never falls: information
kept by a met release never falls as epsilon grows.

The frontier's point at e is the release published at e with its verdict, and an alternative
at e (:mod:`._alternatives`) is the same release, so the three agree. A rerun at e gives that
release too whenever it was searched at e or at an epsilon of the ladder (the point's
``searched_epsilon`` says which); a release searched at another epsilon of the run (one the
rerun does not search) can only make the point better than the rerun.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..cells import table_protection
from ..heldout import NOTHING_KEPT, held_out_verdict, not_met_reasons, prefetch_model
from ._global_recoding import FloatArray, Plan, ReleaseSpace
from ._margin import Searched, search_to_pass
from ._one_search import Fitter, check_fails, checked_release, kept_information
from ._options import SearchOptions

__all__ = [
    "DEFAULT_EPSILONS",
    "LADDER",
    "Chosen",
    "Releases",
    "frontier_points",
    "suppressed_share",
]

#: The frontier's epsilons when none are given (the requested epsilon is added).
DEFAULT_EPSILONS = (0.25, 0.5, 1.0, 2.0, 3.0)
#: The epsilons whose releases are candidates at every larger epsilon, whatever the request: a
#: rerun at any epsilon searches those below it, so it finds what the frontier found.
LADDER = DEFAULT_EPSILONS
#: Rank of a held-out verdict (None: no held-out check).
_VERDICT_RANK = {"met": 3, None: 2, "inconclusive": 1, "breach": 0}
#: The best rank (met, verdict) of a release whose held-out check fails.
_FAILED_TOP = (False, _VERDICT_RANK["inconclusive"])


def suppressed_share(plan: Plan, total: FloatArray) -> float:
    """The share of the records that ``plan`` suppresses."""
    return float(plan.suppressed_records(total) / total.sum())


class Chosen(NamedTuple):
    """The release chosen at one epsilon: ``found`` (judged there: its options carry that
    epsilon and the margin it was searched with), the epsilon it was searched at, and why it
    is not met (empty when it is)."""

    found: Searched
    searched_epsilon: float
    reasons: list[str]

    def rank(self, tolerance: float) -> tuple[bool, int, float]:
        """Met, then held-out verdict, then information: larger is better (a release that
        keeps nothing, never checked on held-out records, ranks below any verdict)."""
        kept = self.found.information_nats
        verdict = held_out_verdict(self.found.held, tolerance)
        return (not self.reasons, _VERDICT_RANK[verdict] if kept > NOTHING_KEPT else -1, kept)


@dataclass
class Releases:
    """The releases of one table at one user's options (all but epsilon), by epsilon.

    Parameters
    ----------
    space, options, folds, tolerance, rng, aim
        As :func:`~._margin.search_to_pass` takes them; ``options.epsilon`` is not used.
    extra : iterable of float
        Epsilons of this run searched as candidates besides :data:`LADDER` (the requested one,
        the frontier's).
    ahead : bool
        At the first :meth:`at`, search every epsilon of ``extra`` (the run's frontier asks for
        them all) while the held-out model is fitted in the background (:meth:`_prefetch`);
        else only those that call needs. False for an alternative's releases.
    """

    space: ReleaseSpace
    options: SearchOptions
    folds: int
    tolerance: float
    rng: int
    aim: bool = True
    extra: Iterable[float] = ()
    ahead: bool = True
    _chosen: dict[float, Chosen] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.extra = tuple(sorted({float(e) for e in (*LADDER, *self.extra)}))

    def with_options(self, options: SearchOptions) -> Releases:
        """The releases at other options (an alternative's), with the same candidate epsilons."""
        return Releases(
            self.space, options, self.folds, self.tolerance, self.rng, self.aim, self.extra, False
        )

    def searched(self, epsilon: float) -> Searched:
        """The release searched at ``epsilon`` (:func:`~._margin.search_to_pass`), once per
        space: the audit's proposal, frontier and alternatives share it."""
        opts = self.options.replace(epsilon=float(epsilon))
        key = ("searched", opts, self.folds, self.tolerance, self.rng, self.aim)
        return self.space.remember(
            key,
            lambda: search_to_pass(
                self.space, opts, self.folds, self.tolerance, self.rng, self.aim
            ),
            lambda found: found.fit.plan,
        )

    def _judged(self, found: Searched, epsilon: float) -> Chosen:
        """``found`` (searched at ``found.options.epsilon``) judged at ``epsilon``."""
        searched_at = found.options.epsilon
        opts = found.options.replace(epsilon=float(epsilon))
        held = found.held
        if searched_at != epsilon:
            fitter = Fitter(self.space, opts)
            held = (
                None
                if found.held is None
                else checked_release(self.space, found.fit.plan, fitter.box, self.rng)
            )
            found = Searched(opts, fitter, found.fit, held, found.information_nats)
        protection = table_protection(self.space.table, opts.epsilon, opts.disclosure)
        reasons = not_met_reasons(opts, found.information_nats, held, self.tolerance, protection)
        return Chosen(found, searched_at, reasons)

    def _fails_at(self, found: Searched, epsilon: float) -> bool:
        """Whether ``found``'s held-out check at ``epsilon`` fails
        (:func:`~._one_search.check_fails`: its interval drawn only when its estimate does not
        decide). A candidate that fails is not met and its verdict is at best inconclusive, so
        it cannot beat a best that is met or has a better verdict, whatever its interval: its
        interval is then not drawn (the chosen release and its figures are the same)."""
        if found.held is None:  # not checked (no folds, or it keeps nothing)
            return False
        box = Fitter(self.space, found.options.replace(epsilon=float(epsilon))).box
        return check_fails(self.space, found.fit.plan, box, self.rng, self.tolerance)

    def _prefetch(self, epsilon: float) -> None:
        """Before the first release is chosen: its first search (the user's options at
        ``epsilon``, :func:`~._margin.search_to_pass`'s first); when that release will be
        checked (``folds`` >= 2 and it keeps information), the table's held-out model fitted
        in the background (:func:`~privwatch.release.heldout.prefetch_model`) while the first
        searches at the other epsilons the run asks for (those below ``epsilon``, and with
        ``ahead`` every epsilon of ``extra``) are made: they need no model, and each is
        remembered on the space (:meth:`Fitter.fit`), so :func:`~._margin.search_to_pass`
        gets it later. Nothing else moves: the checks are made in the same order, on the same
        model (each value's fit is a function of the table alone), so the figures are the
        same."""
        total = self.space.table.total()
        first = Fitter(self.space, self.options.replace(epsilon=epsilon))
        if self.folds >= 2 and kept_information(self.space, first.fit(total).plan) > NOTHING_KEPT:
            prefetch_model(self.space.table, first.box)
        for eps in self.extra:
            if eps != epsilon and (self.ahead or eps < epsilon):
                Fitter(self.space, self.options.replace(epsilon=eps)).fit(total)

    def at(self, epsilon: float) -> Chosen:
        """The release published at ``epsilon``: the best candidate judged there (see the
        module docstring). A candidate is judged (its held-out check made at ``epsilon``) only
        when it may beat the best so far: not when that one is met and the candidate keeps no
        more information. Every candidate is a frontier point's own search, so a run's
        frontier searches each epsilon once."""
        epsilon = float(epsilon)
        hit = self._chosen.get(epsilon)
        if hit is not None:
            return hit
        if not self._chosen:
            self._prefetch(epsilon)
        best = self._judged(self.searched(epsilon), epsilon)
        top = (True, _VERDICT_RANK["met"] if self.folds >= 2 else _VERDICT_RANK[None])
        below = [self.searched(e) for e in self.extra if e < epsilon]
        seen = {id(best.found.fit.plan)}
        for cand in sorted(below, key=lambda s: -s.information_nats):
            if id(cand.fit.plan) in seen:
                continue
            seen.add(id(cand.fit.plan))
            rank = best.rank(self.tolerance)
            if rank[:2] >= top and cand.information_nats <= rank[2] + 1e-12:
                continue
            # a candidate that fails is at best (not met, inconclusive): it cannot beat a best
            # ranked above that, nor one ranked there that keeps as much information
            beaten = rank[:2] > _FAILED_TOP or (
                rank[:2] == _FAILED_TOP and cand.information_nats <= rank[2] + 1e-12
            )
            if beaten and self._fails_at(cand, epsilon):
                continue
            judged = self._judged(cand, epsilon)
            if judged.rank(self.tolerance) > (rank[0], rank[1], rank[2] + 1e-12):
                best = judged
        self._chosen[epsilon] = best
        return best


def frontier_points(
    releases: Releases, epsilons: Sequence[float] | None, requested: float
) -> list[dict[str, Any]]:
    """One point per epsilon (default: :data:`DEFAULT_EPSILONS` and ``requested``): the release
    published there (:meth:`Releases.at`) with its held-out verdict."""
    if epsilons is None:
        epsilons = sorted({*DEFAULT_EPSILONS, requested})
    space = releases.space
    total = space.table.total()
    out = []
    for eps in epsilons:
        chosen = releases.at(float(eps))
        found = chosen.found
        held = found.held
        lo, hi = (None, None) if held is None else map(float, held.breach_probability_ci)
        out.append(
            {
                "epsilon": float(eps),
                "information_nats": found.information_nats,
                "information_global_nats": found.fit.information_global,
                "information_local_nats": found.fit.information_local,
                "suppressed_share": suppressed_share(found.fit.plan, total),
                "method": found.fit.plan.kind,
                "searched_epsilon": chosen.searched_epsilon,
                "confidence": found.options.confidence,
                "met": not chosen.reasons,
                "held_out_verdict": held_out_verdict(held, releases.tolerance),
                "held_out_estimate": None if held is None else float(held.breach_probability),
                "held_out_low": lo,
                "held_out_high": hi,
            }
        )
    return out
