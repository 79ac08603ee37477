"""The frontier of a release: information kept and records suppressed against epsilon.

Each point is the release :func:`~privwatch.release.find_release` would give at its epsilon with
every other option the user set (searched by a :class:`~._one_search.Fitter` from
the same :class:`~privwatch.release.search.SearchOptions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._global_recoding import FloatArray, Plan, ReleaseSpace
from ._one_search import Fit, Fitter, kept_information
from ._options import SearchOptions

__all__ = ["DEFAULT_EPSILONS", "frontier_points", "suppressed_share"]

#: The frontier's epsilons when none are given (the requested epsilon is added).
DEFAULT_EPSILONS = (0.25, 0.5, 1.0, 2.0, 3.0)


def suppressed_share(plan: Plan, total: FloatArray) -> float:
    """The share of the records that ``plan`` suppresses."""
    return float(plan.suppressed_records(total) / total.sum())


def frontier_points(
    space: ReleaseSpace,
    options: SearchOptions,
    epsilons: Sequence[float] | None,
    *,
    known: Fit,
) -> list[dict[str, Any]]:
    """One point per epsilon (default: :data:`DEFAULT_EPSILONS` and ``options.epsilon``).

    ``known`` is the release at ``options.epsilon``: that point is not searched again.
    """
    if epsilons is None:
        epsilons = sorted({*DEFAULT_EPSILONS, options.epsilon})
    total = space.table.total()
    out = []
    for eps in epsilons:
        if float(eps) == options.epsilon:
            fit = known
        else:
            fit = Fitter(space, options.replace(epsilon=float(eps))).fit(total)
        out.append(
            {
                "epsilon": float(eps),
                "information_nats": kept_information(space, fit.plan),
                "information_global_nats": fit.information_global,
                "information_local_nats": fit.information_local,
                "suppressed_share": suppressed_share(fit.plan, total),
                "method": fit.plan.kind,
            }
        )
    return out
