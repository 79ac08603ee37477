"""Re-identification constraints on the release (issue #44 item 4; docs/reidentification.md).

``max_reid_risk`` R: every released class has an expected population size of at least 1 / R
under the chosen model, so a record's journalist risk ``1 / F_k`` is at most R (El Emam 2013,
ch. 16). ``F_k`` is, without population information, the sample class size ``f_k`` itself (the
prosecutor model); with a sampling fraction ``f``, ``f_k / f``; with design weights, the class's
sum of weights; with a population table, its count (:mod:`._reidentification`).

Where the model makes ``F_k`` a function of ``f_k`` alone the constraint is a class size the
search must reach, exactly: prosecutor ``f_k >= ceil(1 / R)``, fraction ``f_k >= ceil(f / R)``
(the search's ``min_class_size``, :func:`search_floor`), for the classes the search keeps. The
records it suppresses form one more class (every column ``*``), which may be smaller; and with
weights or a population table there is no exact size.

``max_population_uniques`` U: the release's estimated population uniques (Dankar et al. 2012's
rule, :func:`privwatch.measures.population_uniques`) at most U.

In both cases the search checks its release (:func:`constraint_block`) and, while a constraint
does not hold, raises its minimum class size step by step (past the smallest class released,
the first size that changes the release) until they hold or nothing is kept
(``ReleaseSearch`` in :mod:`._steps`); the audit checks the release it adopts again
(:func:`constraint_verdict`).

A constraint that does not hold makes the audit not met, with the reason, and the nearest
feasible setting (the R or U the release found achieves) among the alternatives, audited: it is
the release found, with its own lift-privacy verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pandas as pd

from ..release import ReleaseResult
from ..release.heldout import NOTHING_KEPT
from ._spec import AuditSpec

__all__ = [
    "constrained_search",
    "constraint_block",
    "constraint_verdict",
    "has_constraints",
    "search_floor",
]

#: Significant digits of a suggested R or U (rounded up, so the suggestion still holds).
DIGITS = 4


def has_constraints(spec: AuditSpec) -> bool:
    """Whether ``spec`` asks for a re-identification constraint."""
    return spec.max_reid_risk is not None or spec.max_population_uniques is not None


def search_floor(spec: AuditSpec) -> int:
    """The minimum class size the search must reach: ``min_class_size``, raised to the exact
    translation of ``max_reid_risk`` where the model allows one (no weights, no population
    table): ``ceil(f / R)`` with ``f`` the sampling fraction (1: the prosecutor model)."""
    floor = spec.min_class_size
    if spec.max_reid_risk is None or spec.weights is not None or spec.population is not None:
        return floor
    fraction = Fraction(spec.sampling_fraction if spec.sampling_fraction is not None else 1)
    return max(floor, math.ceil(fraction / Fraction(spec.max_reid_risk)))


def constrained_search(
    once: Callable[[dict[str, Any]], ReleaseResult],
    holds: Callable[[pd.DataFrame], bool],
    cols: list[str],
    spec: AuditSpec,
    options: dict[str, Any],
) -> tuple[ReleaseResult, ReleaseResult | None]:
    """The release of ``once`` (one search with the search ``options``) that ``holds`` the
    constraints, its minimum class size raised step by step (past the smallest class
    released, the first size that changes the release) until they hold or nothing is kept;
    with, when nothing is kept, the last release tried that kept information (or, when the
    first kept none, the release at the spec's own ``min_class_size``): the nearest feasible
    setting."""
    found = once(options)
    kept = None
    while found.information_nats > NOTHING_KEPT and not holds(found.released):
        kept = found
        sizes = found.released[cols].astype(str).value_counts()
        options["min_class_size"] = max(options["min_class_size"], int(sizes.min())) + 1
        found = once(options)
    if found.information_nats > NOTHING_KEPT:
        return found, None
    if kept is None and options["min_class_size"] > spec.min_class_size:
        kept = once({**options, "min_class_size": spec.min_class_size})
    if kept is None or kept.information_nats <= NOTHING_KEPT:
        return found, None
    return found, kept


def _up(value: float) -> float:
    """``value`` rounded up to ``DIGITS`` significant digits."""
    if value <= 0:
        return 0.0
    scale = 10.0 ** (DIGITS - 1 - math.floor(math.log10(value)))
    return math.ceil(value * scale) / scale


def _holds(achieved: float, requested: float) -> bool:
    return achieved <= requested or math.isclose(achieved, requested)


def constraint_block(spec: AuditSpec, section: dict[str, Any]) -> dict[str, Any] | None:
    """``reidentification["constraint"]``: for each constraint asked for, ``requested``,
    ``achieved`` (the release's largest ``1 / F_k``, or its estimated population uniques) and
    ``holds``; with the model (where ``F_k`` came from). None when none is asked for."""
    if not has_constraints(spec):
        return None
    release = section["release"]
    block: dict[str, Any] = {"model": release["population_source"]}
    if spec.max_reid_risk is not None:
        achieved = float(release["journalist_max"])
        block["max_reid_risk"] = {
            "requested": float(spec.max_reid_risk),
            "achieved": achieved,
            "holds": _holds(achieved, spec.max_reid_risk),
        }
    if spec.max_population_uniques is not None:
        achieved = float(release["population_uniques"]["estimate"])
        block["max_population_uniques"] = {
            "requested": float(spec.max_population_uniques),
            "achieved": achieved,
            "holds": _holds(achieved, spec.max_population_uniques),
        }
    return block


def constraint_verdict(
    block: dict[str, Any] | None,
    leakage: dict[str, Any],
    found: ReleaseResult | None,
    nearest: tuple[dict[str, Any], ReleaseResult] | None = None,
) -> None:
    """Make ``leakage`` not met, with the reason and the nearest feasible setting among its
    alternatives, for each constraint of ``block`` that does not hold (in place).

    ``found``: the release adopted; ``nearest``: where the constraints left nothing kept, the
    last release the search tried that kept information, with its own ``constraint_block``.
    The alternative is the R (or U) that release achieves, with its lift-privacy verdict."""
    if block is None:
        return
    words = {
        "max_reid_risk": (
            "a released class's expected population size is {a:.4g} < 1 / {r:g} ({m}): its "
            "records' re-identification risk {b:.4g} exceeds `max_reid_risk`={r:g}",
            "a larger `max_reid_risk`",
        ),
        "max_population_uniques": (
            "the release's estimated population uniques are {b:.4g} > "
            "`max_population_uniques`={r:g} ({m})",
            "a larger `max_population_uniques`",
        ),
    }
    model = "model: " + ("prosecutor" if block["model"] == "none" else block["model"])
    for name, (reason, change) in words.items():
        part = block.get(name)
        if part is None or part["holds"]:
            continue
        achieved, requested = part["achieved"], part["requested"]
        size = 1.0 / achieved if name == "max_reid_risk" and achieved > 0 else math.inf
        leakage["status"] = "not_met"
        leakage["reasons"] = [
            *leakage["reasons"],
            reason.format(a=size, b=achieved, r=requested, m=model),
        ]
        alt_block, alt = (block, found) if nearest is None else nearest
        if alt is None:
            continue
        value = _up(alt_block[name]["achieved"])
        held = alt.held_out
        leakage["alternatives"] = [
            *leakage["alternatives"],
            {
                "epsilon": alt.epsilon, "disclosure": alt.disclosure, "changed": name,
                "args": {name: value}, "information_nats": alt.information_nats,
                "held_out": None if held is None else {
                    "estimate": held.breach_probability,
                    "interval": list(held.breach_probability_ci),
                },
                "feasible": bool(alt.satisfied), "unprotected": [],
                "searched_epsilon": None,  # the search at this epsilon; which ladder epsilon
                # found its release is not kept on the result
                "description": (
                    f"{change}: `{name}`={value:g} holds for a release keeping "
                    f"{alt.information_nats:.2f} nats "
                    f"({'met' if alt.satisfied else 'not met'} on lift privacy)"
                ),
            },
        ]  # fmt: skip
