"""The named steps of the audit, in the order an in-memory audit takes them (1-4 in
:class:`privwatch.audit.MemoryRoute`'s measure and decide, 5-7 in the release methods'
decide: :mod:`privwatch.audit._method_search`, ``_method_watchdog``, ``_method_relaxed``).

1. :func:`joint_sensitive` — several sensitive columns become one joint tuple column;
2. :func:`resolve_estimator` — the log-lift estimator behind ``estimator=NAME``;
3. :func:`estimate_log_lift` — fit the watchdog once at epsilon = inf, score every record;
4. :func:`tradeoff_curve` and :func:`choose_epsilon` — the curve, and the proposed epsilon;
5. :func:`watchdog_release` — threshold the fitted scores at epsilon, flag and release (every
   method on records in memory);
6. :class:`ReleaseSearch` and :func:`search_release` — the most informative generalisation
   (the method ``search``, on the records or an engine's count table); with no epsilon given,
   the smallest epsilon whose release is met and keeps most of the information
   (:func:`propose_release`);
7. :func:`adopt_search` — the searched release replaces the watchdog's, record by record.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import PrivacyWarning, ValidationError
from ..release import Hierarchy, ReleaseNotMetWarning, ReleaseResult, find_release
from ..release.search import SearchCache
from ..watchdog import record_tradeoff, tradeoff
from ._reid_constraint import constrained_search, search_floor
from ._spec import ESTIMATORS, AuditSpec

if TYPE_CHECKING:  # imported where used: the learned families and the watchdog's estimator
    # load scikit-learn (and PyTorch), which the plug-in route on an engine never needs
    from ..estimators import LiftEstimator
    from ..watchdog import RecordScores, Watchdog

__all__ = [
    "ESTIMATORS",
    "TARGET_LOSS",
    "ReleaseSearch",
    "adopt_search",
    "choose_epsilon",
    "estimate_log_lift",
    "joint_sensitive",
    "resolve_estimator",
    "search_release",
    "tradeoff_curve",
    "watchdog_release",
]

#: With no epsilon given, the audit proposes the smallest one whose release loses at most this
#: share of the information in the observed columns (NMIL, plug-in) or of the records unchanged
#: (learned estimators, whose records share no symbols).
TARGET_LOSS = 0.10


def joint_sensitive(
    df: pd.DataFrame, sensitive: str | Sequence[str], observed: Sequence[str] | None
) -> tuple[pd.DataFrame, str, Sequence[str] | None, list[str] | None]:
    """``(df, sensitive, observed, components)``: a list of sensitive columns becomes one column
    ``"a+b"`` holding their joint tuple ``"x|y"`` (``components`` lists them; None for one)."""
    if isinstance(sensitive, str):
        return df, sensitive, observed, None
    components = list(sensitive)
    absent = [c for c in components if c not in df.columns]
    if absent:
        raise ValidationError(f"`sensitive` must name columns of the data; got {absent}.")
    joint = "+".join(components)
    if observed is None:
        observed = [c for c in df.columns if c not in components]
    df = df.assign(**{joint: df[components].astype(str).agg("|".join, axis=1)})
    return df, joint, observed, components if len(components) > 1 else None


def resolve_estimator(name: str, rng: int) -> LiftEstimator | None:
    """The estimator of ``estimator=NAME`` (None: the exact plug-in route)."""
    if name not in ESTIMATORS:
        raise ValidationError(f"`estimator` must be one of {ESTIMATORS}; got {name!r}.")
    if name == "plugin":
        return None
    from ..estimators import ClassifierLift, DVLift, make_lift_estimator

    if name == "classifier":
        # two networks per model: cross-fitting already averages 3 splits' fold models per
        # record, and 16 models x 5 networks cost 6x on a shared 2-core machine (#41 item 7)
        return ClassifierLift(rng=rng, n_ensemble=2)
    if name == "dv":
        return DVLift(rng=rng)
    return make_lift_estimator(name, rng=rng)  # auto (#16) or one AutoLift family


def estimate_log_lift(
    frame: pd.DataFrame,
    sensitive: str,
    cols: list[str],
    est: LiftEstimator | None,
    max_levels: int | None,
    rng: int,
) -> tuple[Watchdog, np.ndarray, np.ndarray]:
    """``(probe, risk, grid)``: the watchdog fitted once (epsilon = inf), every record's risk,
    and a 40-point epsilon grid up to the 99.9 % quantile of the finite risks."""
    from ..watchdog import Watchdog

    probe = Watchdog(
        epsilon=math.inf, sensitive=sensitive, observed=cols, max_levels=max_levels,
        estimator=est, rng=rng,
    )  # fmt: skip
    probe.fit(frame)
    risk = probe.score_samples(frame)
    finite = risk[np.isfinite(risk)]
    top = float(np.quantile(finite, 0.999)) if finite.size else 1.0
    grid = np.unique(np.round(np.linspace(0.02, max(top, 0.1) * 1.05, 40), 4))
    return probe, risk, grid


def tradeoff_curve(
    probe: Watchdog, plugin: bool, risk: np.ndarray, labels: pd.Series, grid: np.ndarray
) -> pd.DataFrame:
    """The exact tradeoff of the fitted joint (plug-in) or the record-level one."""
    if plugin:
        return tradeoff(probe.joint_.p, grid).to_frame()
    return record_tradeoff(risk, labels, grid).to_frame()


def choose_epsilon(curve: pd.DataFrame, plugin: bool) -> tuple[float, str]:
    """The smallest threshold losing at most :data:`TARGET_LOSS`, with the reason in words."""
    if plugin:
        ok = curve[curve["nmil"] <= TARGET_LOSS]
        if len(ok):
            row = ok.iloc[0]
            return float(row["threshold"]), (
                f"smallest epsilon on the tradeoff curve whose release keeps at least "
                f"{1 - TARGET_LOSS:.0%} of the information in the observed columns "
                f"(NMIL = {row['nmil']:.3f}); its exact lift-privacy level is "
                f"{row['effective_epsilon']:.3f} nats"
            )
    else:
        ok = curve[curve["flagged_probability"] <= TARGET_LOSS]
        if len(ok):
            row = ok.iloc[0]
            return float(row["threshold"]), (
                f"smallest epsilon on the tradeoff curve that releases at least "
                f"{1 - TARGET_LOSS:.0%} of the records unchanged "
                f"({row['flagged_probability']:.1%} flagged)"
            )
    row = curve.iloc[-1]
    return float(row["threshold"]), (
        f"largest epsilon on the grid, since none loses at most {TARGET_LOSS:.0%}; the data "
        "leak strongly: consider coarser observed columns"
    )


def watchdog_release(
    probe: Watchdog,
    frame: pd.DataFrame,
    epsilon: float,
    delta: float | None,
    epsilon_max: float,
) -> tuple[Watchdog, RecordScores, pd.DataFrame, np.ndarray, pd.DataFrame]:
    """``(wd, scores, score_frame, flags, release)`` at ``epsilon``: the log-lift is already
    estimated on these records, so only the threshold changes (no refit)."""
    wd = probe.set_params(delta=delta, epsilon_max=epsilon_max).rethreshold(epsilon)
    scores = wd.score_records(frame)
    flags = wd.flag(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        release = wd.transform(frame)
    score_frame = scores.to_frame().drop(columns=["known"])
    score_frame["flagged"] = flags
    return wd, scores, score_frame, flags, release


@dataclass
class ReleaseSearch:
    """:func:`privwatch.release.find_release` with the audit's settings fixed (every search
    option of ``spec``, so none is dropped); a call searches at one epsilon (``final=False``: no
    frontier or suggestions; ``data``: another table, no held-out folds, as the attack's
    half-refit release)."""

    source: pd.DataFrame
    sensitive: str | list[str]
    cols: list[str]
    spec: AuditSpec
    counts_column: str | None = None
    #: Whether a release of ``source`` (its per-record cells) holds the re-identification
    #: constraints (``max_reid_risk``, ``max_population_uniques``); None: none enforced here.
    holds: Callable[[pd.DataFrame], bool] | None = None
    #: Per epsilon, when the constraints left nothing kept: the last release the step tried
    #: that kept information (the nearest feasible setting, ``_reid_constraint.py``).
    nearest: dict[float, ReleaseResult] = field(init=False, default_factory=dict)
    #: The count table and searches of ``source`` reused across calls (:class:`SearchCache`).
    cache: SearchCache = field(init=False)

    def __post_init__(self) -> None:
        self.cache = SearchCache(folds=self.spec.folds)

    @property
    def held_out_tolerance(self) -> float:
        return self.spec.held_out_tolerance

    def quick(self, eps: float) -> ReleaseResult:
        """The release at ``eps`` on all records, no held-out check, frontier or advice."""
        return self._find(self.source, eps, folds=0, frontier=[], suggest=False)

    def __call__(
        self,
        eps: float,
        final: bool = True,
        data: pd.DataFrame | None = None,
        suggest: bool | None = None,
    ) -> ReleaseResult:
        return self._find(
            self.source if data is None else data,
            eps,
            folds=self.spec.folds if data is None else 0,
            frontier=None if final else [],
            suggest=final if suggest is None else suggest,
        )

    def _find(
        self,
        data: pd.DataFrame,
        eps: float,
        *,
        folds: int,
        frontier: list[float] | None,
        suggest: bool,
    ) -> ReleaseResult:
        options = self.spec.search_options()
        options["min_class_size"] = search_floor(self.spec)

        def once(given: dict[str, Any]) -> ReleaseResult:
            return self._once(data, eps, folds, frontier, suggest, given)

        if self.holds is None or data is not self.source:
            return once(options)
        found, kept = constrained_search(once, self.holds, self.cols, self.spec, options)
        if kept is not None:
            self.nearest[float(eps)] = kept
        return found

    def _once(
        self,
        data: pd.DataFrame,
        eps: float,
        folds: int,
        frontier: list[float] | None,
        suggest: bool,
        options: dict[str, Any],
    ) -> ReleaseResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            warnings.simplefilter("ignore", ReleaseNotMetWarning)
            return find_release(
                data, self.sensitive, self.cols, epsilon=eps, folds=folds,
                frontier_epsilons=frontier, suggest=suggest, rng=self.spec.seed,
                counts_column=self.counts_column, cache=self.cache, **options,
            )  # fmt: skip


#: Epsilons the proposal tries (with the tradeoff curve's own proposal), smallest first.
PROPOSAL_GRID = (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)


def search_release(
    search: ReleaseSearch, epsilon: float, reason: str, proposed: bool
) -> tuple[ReleaseResult, float, str]:
    """``(found, epsilon, reason)``: the release at ``epsilon``, or, when epsilon is *proposed*,
    at the smallest epsilon whose release is met (held-out check included) and keeps at least
    ``1 - TARGET_LOSS`` of the information of the observed columns, never one whose guarantee
    protects no value (:func:`propose_release`). A release that is not met raises
    ReleaseNotMetWarning."""
    if proposed:
        found, epsilon, reason = propose_release(search, epsilon)
    else:
        found = search(epsilon)
    if not found.satisfied:
        warnings.warn("; ".join(found.reasons), ReleaseNotMetWarning, stacklevel=3)
    return found, epsilon, reason


def propose_release(
    search: ReleaseSearch, curve_epsilon: float
) -> tuple[ReleaseResult, float, str]:
    """The smallest epsilon of :data:`PROPOSAL_GRID` (and the tradeoff curve's proposal) whose
    searched release is met and keeps ``1 - TARGET_LOSS`` of the input's information.

    Each candidate is searched once without held-out folds (an upper bound on what it keeps);
    those that keep enough are searched in full (held-out check, margins grown as needed) in
    increasing order, and the first that is met and still keeps enough is proposed. When none
    does, the met release that keeps the most is proposed with its share said, or, when none
    is met, the last one searched, not met."""
    share = 1 - TARGET_LOSS
    best: ReleaseResult | None = None
    tried: ReleaseResult | None = None
    for eps in sorted({*PROPOSAL_GRID, round(float(curve_epsilon), 4)}):
        quick = search.quick(eps)
        if quick.information_nats < share * quick.information_input_nats:
            continue
        tried = search(eps, suggest=False)
        kept = tried.information_nats / max(tried.information_input_nats, 1e-300)
        if tried.satisfied and kept >= share:
            return (
                tried,
                eps,
                (
                    f"smallest epsilon whose release is met, held-out check included, and keeps at "
                    f"least {share:.0%} of the information in the observed columns "
                    f"({tried.information_nats:.2f} of {tried.information_input_nats:.2f} nats)"
                ),
            )
        if tried.satisfied and (best is None or tried.information_nats > best.information_nats):
            best = tried
    if best is not None:
        kept = best.information_nats / max(best.information_input_nats, 1e-300)
        return (
            best,
            best.epsilon,
            (
                f"no epsilon up to {max(PROPOSAL_GRID):g} gives a met release that keeps "
                f"{share:.0%} of the information; this met release keeps the most ({kept:.0%})"
            ),
        )
    last = search(max(PROPOSAL_GRID) if tried is None else tried.epsilon)  # with advice
    return (
        last,
        last.epsilon,
        (
            f"no epsilon up to {max(PROPOSAL_GRID):g} gives a release that keeps {share:.0%} "
            "of the information and is met; the largest tried is shown"
        ),
    )


def adopt_search(
    found: ReleaseResult, frame: pd.DataFrame, cols: list[str], score_frame: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """``(release, score_frame, flags)`` of the searched release: its cells replace the
    observed columns, its per-record columns replace the watchdog's risk and flag."""
    release = pd.DataFrame(
        {c: found.released[c].to_numpy() for c in cols}, index=frame.index, columns=cols
    )
    score_frame = score_frame.drop(columns=["risk", "flagged"])
    for c in found.records.columns:
        score_frame[c] = found.records[c].to_numpy()
    return release, score_frame, found.records["flagged"].to_numpy()


def spec_settings(
    spec: AuditSpec,
    sensitive: Any,
    observed: list[str],
    epsilon: float,
    *,
    search: bool = True,
    bins: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """leakage.json ``settings`` of a route: the options of ``spec`` as the audit used them
    (the columns and epsilon it resolved; ``search``: the release search's options too, which
    the streamed route has none of), then ``extra``, through :func:`settings_record`."""
    s = spec
    options: dict[str, Any] = {
        "sensitive": sensitive, "observed": observed, "epsilon": epsilon, "delta": s.delta,
        "epsilon_max": s.epsilon_max, "estimator": s.estimator, "missing": s.missing,
        "force": s.force, "max_levels": s.max_levels, "rng": s.seed,
    }  # fmt: skip
    if search:
        options.update(
            disclosure=s.disclosure, max_suppressed=s.max_suppressed, folds=s.folds,
            useful=s.useful, local_recoding=s.local, held_out_tolerance=s.held_out_tolerance,
            confidence=s.confidence, min_class_size=s.min_class_size, max_nodes=s.max_nodes,
            checks=s.checks, report_records=s.report_records, max_reid_risk=s.max_reid_risk,
            max_population_uniques=s.max_population_uniques,
        )  # fmt: skip
    else:
        options.update(folds=s.folds, checks=False, report_records=s.report_records)
    options.update(extra)
    return settings_record(options, bins, None if not search else s.hierarchies)


def settings_record(
    options: dict[str, Any],
    bins: Mapping[str, Any] | None,
    hierarchies: Mapping[str, str | Path | Hierarchy] | None,
) -> dict[str, Any]:
    """The audit's settings as JSON-ready values (leakage.json ``settings``)."""
    out = dict(options)
    out["bins"] = {k: v if isinstance(v, int) else list(v) for k, v in (bins or {}).items()}
    out["hierarchies"] = {
        k: str(v) if not isinstance(v, Hierarchy) else v.origin or "given"
        for k, v in (hierarchies or {}).items()
    }
    return out
