"""The audit: fit the watchdog on a table, choose epsilon, score, release and report leakage."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..preprocessing import DEFAULT_MAX_LEVELS, BinSpec
from ..release import Hierarchy, ReleaseResult
from ..watchdog import Watchdog
from ._checks import attack_section, classic_section, mapping_table
from ._leakage import LEAKAGE_KEYS, leakage_of_search, leakage_of_watchdog
from ._prepare import kept_rows, prepare_rows, resolve_bins
from ._stamp import make_stamp
from ._steps import (
    ESTIMATORS,
    TARGET_LOSS,
    ReleaseSearch,
    adopt_search,
    choose_epsilon,
    estimate_log_lift,
    joint_sensitive,
    resolve_estimator,
    search_release,
    settings_record,
    tradeoff_curve,
    watchdog_release,
)

__all__ = ["ESTIMATORS", "LEAKAGE_KEYS", "TARGET_LOSS", "AuditResult", "audit", "run_audit"]

Step = Callable[[str], None]


@dataclass
class AuditResult:
    """Everything an audit produced; :func:`privwatch.report.write_audit` writes it to a folder.

    ``leakage`` has exactly the keys of :data:`LEAKAGE_KEYS` on every route, ``None`` where a
    value does not apply (see :mod:`privwatch.report._leakage` and docs/glossary.md).
    """

    settings: dict[str, Any]
    summary: dict[str, Any]
    epsilon: float
    epsilon_reason: str
    watchdog: Watchdog
    scores: pd.DataFrame
    release: pd.DataFrame
    tradeoff: pd.DataFrame
    leakage: dict[str, Any]
    log_lift: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    data: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    found: ReleaseResult | None = None
    input_rows: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, np.int64))
    stamp: dict[str, Any] = field(default_factory=dict)
    warnings: list[dict[str, str]] = field(default_factory=list)
    mechanism: pd.DataFrame | None = field(repr=False, default=None)

    @property
    def satisfied(self) -> bool:
        """Whether the requested guarantee was delivered (see ``leakage["status"]``)."""
        return bool(self.leakage["status"] == "met")


def audit(df: pd.DataFrame, *args: Any, **kwargs: Any) -> AuditResult:
    """Run the privacy watchdog audit of ``df`` (see the CLI's ``privwatch audit``).

    Every warning raised during the run is kept, once, in ``AuditResult.warnings`` (and in
    ``leakage.json``) and raised again for the caller. Arguments: see :func:`run_audit`.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_audit(df, *args, **kwargs)
    seen: set[tuple[str, str]] = set()
    for w in caught:
        key = (w.category.__name__, str(w.message))
        if key in seen:
            continue
        seen.add(key)
        result.warnings.append({"category": key[0], "message": key[1]})
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    result.leakage["warnings"] = list(result.warnings)
    return result


def run_audit(
    df: pd.DataFrame,
    sensitive: str | Sequence[str],
    observed: Sequence[str] | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    epsilon_max: float = math.inf,
    estimator: str = "plugin",
    bins: Mapping[str, BinSpec] | None = None,
    missing: str = "error",
    force: bool = False,
    max_levels: int | None = DEFAULT_MAX_LEVELS,
    rng: int = 0,
    step: Step | None = None,
    hierarchies: Mapping[str, str | Path | Hierarchy] | None = None,
    disclosure: str = "both",
    max_suppressed: float = 0.05,
    folds: int = 5,
    useful: str | None = None,
    local: bool = True,
    held_out_tolerance: float = 0.05,
    confidence: float | None = None,
    source_path: str | Path | None = None,
    checks: bool = True,
) -> AuditResult:
    """Run the privacy watchdog audit of ``df`` (see the CLI's ``privwatch audit``).

    With ``epsilon=None`` the tradeoff curve proposes one (see :data:`TARGET_LOSS`) and the
    reason is returned in ``epsilon_reason``. On the plug-in route without ``delta`` the release
    is the most informative generalisation that meets epsilon-lift privacy
    (:func:`privwatch.release.find_release`: hierarchies, suppression limit, local recoding,
    held-out check); with ``delta`` it is the (epsilon, delta) watchdog release of Sadeghi et al.
    Several sensitive columns (a list) are scored as their joint tuple and released with a
    guarantee for each and for the joint tuple. With ``checks`` (plug-in route) the classic
    measures and an inference attack are added (:mod:`privwatch.report._checks`). ``source_path``
    (the input file) is named and hashed in the stamp. Input row numbers (0-based positions in
    ``df``) are kept in ``input_rows``, so outputs join back after ``missing="drop"``.
    """
    n_in_rows, n_in_cols = df.shape
    df, sensitive, observed, components = joint_sensitive(df, sensitive, observed)
    say = step or (lambda _msg: None)
    est = resolve_estimator(estimator, rng)
    plugin = est is None
    say("preparing the data")
    if bins and sensitive in df.columns:
        listed = [c for c in (observed or df.columns) if c != sensitive and c in df.columns]
        bins = resolve_bins(df, bins, kept_rows(df, sensitive, listed, missing))
    frame, cols, counts, input_rows = prepare_rows(
        df, sensitive, observed, bins=bins, missing=missing, force=force
    )
    say("estimating the log-lift")
    probe, risk, grid = estimate_log_lift(frame, sensitive, cols, est, max_levels, rng)
    say("computing the tradeoff curve")
    curve = tradeoff_curve(probe, plugin, risk, frame[sensitive], grid)
    proposed = epsilon is None
    reason = "given by the user"
    if epsilon is None:
        epsilon, reason = choose_epsilon(curve, plugin)
    say("fitting the watchdog and releasing")
    wd, scores, score_frame, flags, release = watchdog_release(
        probe, frame, float(epsilon), delta, epsilon_max
    )
    source = frame
    if components is not None:
        source = frame.join(df[components].iloc[input_rows].reset_index(drop=True))
    sens_cols = list(components) if components else [sensitive]
    found: ReleaseResult | None = None
    search = ReleaseSearch(
        source, list(components) if components else sensitive, cols, disclosure,
        max_suppressed, hierarchies, useful, local, folds, held_out_tolerance, confidence, rng,
    )  # fmt: skip
    if plugin and delta is None:
        say("searching the most informative release")
        found, epsilon, reason = search_release(search, float(epsilon), reason, proposed)
        release, score_frame, flags = adopt_search(found, frame, cols, score_frame)
        leakage = leakage_of_search(wd, found, frame[sensitive], release)
    else:
        leakage = leakage_of_watchdog(wd, delta, frame[sensitive], scores.log_lift, plugin=plugin)
    summary: dict[str, Any] = dict(counts)
    summary.update(
        n_records=len(frame),
        sensitive=sensitive,
        sensitive_counts={str(k): int(v) for k, v in frame[sensitive].value_counts().items()},
        observed=cols,
        n_flagged=int(flags.sum()),
    )
    if plugin:
        summary["n_observed_symbols"] = int(wd.joint_.p.shape[1])
    if found is not None:
        summary["n_suppressed"] = found.suppressed_records
    if checks and plugin:
        say("computing the classic disclosure measures")
        leakage["classic"] = classic_section(source, release, sens_cols, cols)
        if found is not None:
            say("attacking the release (inference with a control set)")
            eps_found = float(epsilon)
            leakage["attack"] = attack_section(
                source,
                found,
                sens_cols,
                cols,
                lambda part: search(eps_found, final=False, data=part),
                rng=rng,
            )
    options = {
        "sensitive": sensitive, "observed": cols, "epsilon": epsilon, "delta": delta,
        "epsilon_max": epsilon_max, "estimator": estimator, "missing": missing, "force": force,
        "max_levels": max_levels, "rng": rng, "disclosure": disclosure,
        "max_suppressed": max_suppressed, "folds": folds, "useful": useful,
        "local_recoding": local, "held_out_tolerance": held_out_tolerance,
        "confidence": confidence, "checks": checks,
    }  # fmt: skip
    return AuditResult(
        settings_record(options, bins, hierarchies),
        summary,
        float(epsilon),
        reason,
        wd,
        score_frame,
        release,
        curve,
        leakage,
        scores.log_lift,
        frame,
        found,
        input_rows=input_rows,
        stamp=make_stamp(source_path, n_in_rows, n_in_cols),
        mechanism=None if found is None else mapping_table(frame, found.released, cols),
    )
