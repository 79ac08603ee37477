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

from ..estimators import ClassifierLift, DVLift, LiftEstimator
from ..exceptions import PrivacyWarning, ValidationError
from ..measures import leakage_report
from ..preprocessing import DEFAULT_MAX_LEVELS, BinSpec
from ..release import Hierarchy, ReleaseNotMetWarning, ReleaseResult, find_release
from ..watchdog import Watchdog, record_tradeoff, tradeoff
from ..watchdog._results import RecordScores
from ._checks import attack_section, classic_section, mapping_table
from ._prepare import kept_rows, prepare_rows, resolve_bins
from ._stamp import make_stamp

__all__ = ["ESTIMATORS", "AuditResult", "audit"]

ESTIMATORS = ("plugin", "classifier", "dv")
#: With no epsilon given, the audit proposes the smallest one whose release loses at most this
#: share of the information in the observed columns (NMIL, plug-in) or of the records unchanged
#: (learned estimators, whose records share no symbols).
TARGET_LOSS = 0.10

Step = Callable[[str], None]


@dataclass
class AuditResult:
    """Everything an audit produced; :func:`privwatch.report.write_audit` writes it to a folder."""

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
        return bool(self.leakage.get("status", "met") == "met")


def _estimator(name: str, rng: int) -> LiftEstimator | None:
    if name not in ESTIMATORS:
        raise ValidationError(f"`estimator` must be one of {ESTIMATORS}; got {name!r}.")
    if name == "classifier":
        return ClassifierLift(rng=rng)
    if name == "dv":
        return DVLift(rng=rng)
    return None


def _choose_epsilon(curve: pd.DataFrame, plugin: bool) -> tuple[float, str]:
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
    components: list[str] | None = None
    if not isinstance(sensitive, str):
        components = list(sensitive)
        missing_s = [c for c in components if c not in df.columns]
        if missing_s:
            raise ValidationError(f"`sensitive` must name columns of the data; got {missing_s}.")
        joint = "+".join(components)
        if observed is None:
            observed = [c for c in df.columns if c not in components]
        df = df.assign(**{joint: df[components].astype(str).agg("|".join, axis=1)})
        sensitive = joint
        if len(components) == 1:
            components = None
    say = step or (lambda _msg: None)
    est = _estimator(estimator, rng)
    say("preparing the data")
    if bins and sensitive in df.columns:
        listed = [c for c in (observed or df.columns) if c != sensitive and c in df.columns]
        bins = resolve_bins(df, bins, kept_rows(df, sensitive, listed, missing))
    frame, cols, counts, input_rows = prepare_rows(
        df, sensitive, observed, bins=bins, missing=missing, force=force
    )
    say("estimating the log-lift")
    probe = Watchdog(
        epsilon=math.inf, sensitive=sensitive, observed=cols, max_levels=max_levels,
        estimator=est, rng=rng,
    )  # fmt: skip
    probe.fit(frame)
    risk = probe.score_samples(frame)
    finite = risk[np.isfinite(risk)]
    top = float(np.quantile(finite, 0.999)) if finite.size else 1.0
    grid = np.unique(np.round(np.linspace(0.02, max(top, 0.1) * 1.05, 40), 4))
    say("computing the tradeoff curve")
    if est is None:
        curve = tradeoff(probe.joint_.p, grid).to_frame()
    else:
        curve = record_tradeoff(risk, frame[sensitive], grid).to_frame()
    reason = "given by the user"
    proposed = epsilon is None
    if epsilon is None:
        epsilon, reason = _choose_epsilon(curve, est is None)
    say("fitting the watchdog and releasing")
    # the log-lift is already estimated on these records: only the threshold changes
    wd = probe.set_params(delta=delta, epsilon_max=epsilon_max).rethreshold(epsilon)
    scores: RecordScores = wd.score_records(frame)
    flags = wd.flag(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        release = wd.transform(frame)
    score_frame = scores.to_frame().drop(columns=["known"])
    score_frame["flagged"] = flags
    found: ReleaseResult | None = None
    source = frame
    if components is not None:
        extra = df[components].iloc[input_rows].reset_index(drop=True)
        source = frame.join(extra)
    if est is None and delta is None:
        say("searching the most informative release")

        def search(
            eps: float, final: bool = True, data: pd.DataFrame | None = None
        ) -> ReleaseResult:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                warnings.simplefilter("ignore", ReleaseNotMetWarning)
                return find_release(
                    source if data is None else data,
                    list(components) if components else sensitive,
                    cols,
                    epsilon=eps,
                    disclosure=disclosure,
                    max_suppressed=max_suppressed,
                    hierarchies=hierarchies,
                    useful=useful,
                    local=local,
                    folds=folds if data is None else 0,
                    held_out_tolerance=held_out_tolerance,
                    frontier_epsilons=None if final else [],
                    suggest=final,
                    confidence=confidence,
                    rng=rng,
                )

        found = search(float(epsilon))
        if proposed and not found.satisfied and found.held_out is not None:
            # a proposed epsilon must also hold on held-out records: try larger ones, quickly
            # (no frontier, no suggestions), and search the first that holds in full
            for factor in (1.5, 2.0, 3.0):
                retry = search(float(epsilon) * factor, final=False)
                if retry.satisfied:
                    reason = (
                        f"{reason}; raised {factor:g}x to {epsilon * factor:.3g} because at "
                        f"{epsilon:.3g} the held-out breach probability was "
                        f"{found.held_out.breach_probability:.1%}, above the tolerance "
                        f"{held_out_tolerance:.0%}"
                    )
                    epsilon = epsilon * factor
                    found = search(float(epsilon))
                    break
        if not found.satisfied:
            warnings.warn("; ".join(found.reasons), ReleaseNotMetWarning, stacklevel=2)
        release = frame[cols].copy()
        for c in cols:
            release[c] = found.released[c].to_numpy()
        score_frame = score_frame.drop(columns=["risk", "flagged"])
        for c in found.records.columns:
            score_frame[c] = found.records[c].to_numpy()
        flags = found.records["flagged"].to_numpy()
    summary: dict[str, Any] = dict(counts)
    summary.update(
        {
            "n_records": len(frame),
            "sensitive": sensitive,
            "sensitive_counts": {
                str(k): int(v) for k, v in frame[sensitive].value_counts().items()
            },
            "observed": cols,
            "n_flagged": int(flags.sum()),
        }
    )
    leakage: dict[str, Any] = {
        "guarantee": wd.guarantee_.to_dict(),
        "guarantee_in_words": wd.guarantee_.explain(),
    }
    if found is not None:
        leakage.update(found.to_dict())
        leakage["guarantee_in_words"] = explain_release(found, frame[sensitive])
        leakage["before"] = wd.leakage_before_.to_dict()
        leakage["after"] = release_leakage(frame[sensitive], release[cols]).to_dict()
        leakage["utility"] = {
            "information_nats": found.information_nats,
            "information_input_nats": found.information_input_nats,
        }
        summary["n_observed_symbols"] = int(wd.joint_.p.shape[1])
        summary["n_suppressed"] = found.suppressed_records
    elif est is None:
        reached = wd.guarantee_.breach_probability <= (delta or 0.0) + 1e-12
        leakage["status"] = "met" if reached else "not_met"
        leakage["reasons"] = (
            []
            if reached
            else [
                f"the (epsilon, delta) algorithm reaches a breach probability of "
                f"{wd.guarantee_.breach_probability:.3g}, above the requested delta {delta:g}"
            ]
        )
        leakage["before"] = wd.leakage_before_.to_dict()
        leakage["after"] = wd.leakage_after_.to_dict()
        leakage["utility"] = wd.utility_.to_dict()
        summary["n_observed_symbols"] = int(wd.joint_.p.shape[1])
    else:
        ll = scores.log_lift
        codes = pd.Index(wd.sensitive_labels_).get_indexer(frame[sensitive])
        leakage["before"] = {
            "mutual_information_estimate": float(np.mean(ll[np.arange(len(codes)), codes]))
        }
        leakage["after"] = {"note": "exact leakage of the release needs the plug-in estimator"}
        leakage["utility"] = wd.utility_.to_dict()
    mechanism = None if found is None else mapping_table(frame, found.released, cols)
    if checks and est is None:
        sens_cols = list(components) if components else [sensitive]
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
    settings = {
        "sensitive": sensitive,
        "observed": cols,
        "epsilon": epsilon,
        "delta": delta,
        "epsilon_max": epsilon_max,
        "estimator": estimator,
        "bins": {k: v if isinstance(v, int) else list(v) for k, v in (bins or {}).items()},
        "missing": missing,
        "force": force,
        "max_levels": max_levels,
        "rng": rng,
        "hierarchies": {
            k: str(v) if not isinstance(v, Hierarchy) else "given"
            for k, v in (hierarchies or {}).items()
        },
        "disclosure": disclosure,
        "max_suppressed": max_suppressed,
        "folds": folds,
        "useful": useful,
        "local_recoding": local,
        "held_out_tolerance": held_out_tolerance,
        "confidence": confidence,
        "checks": checks,
    }
    return AuditResult(
        settings,
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
        mechanism=mechanism,
    )


def release_leakage(sensitive: pd.Series, released: pd.DataFrame) -> Any:
    """Exact leakage measures of the released cells about the sensitive column."""
    cells = pd.factorize(pd.MultiIndex.from_frame(released.astype(str)))[0]
    s_codes = pd.factorize(sensitive, sort=True)[0]
    p = np.zeros((int(s_codes.max()) + 1, int(cells.max()) + 1))
    np.add.at(p, (s_codes, cells), 1.0)
    return leakage_report(p / p.sum())


def explain_release(found: ReleaseResult, sensitive: pd.Series) -> str:
    r"""What the guarantee means for one person, in words.

    For the rarest sensitive value (prior :math:`p`), epsilon-lift privacy bounds the posterior
    by :math:`p e^{\epsilon}` and, two-sided, also by :math:`1 - (1 - p) e^{-\epsilon}` (every
    other value keeps at least :math:`e^{-\epsilon}` of its prior), and from below by
    :math:`p e^{-\epsilon}`.
    """
    shares = sensitive.astype(str).value_counts(normalize=True)
    value, prior = str(shares.index[-1]), float(shares.iloc[-1])
    e = found.epsilon
    grows = min(1.0, prior * math.exp(e))
    if found.disclosure == "both":
        grows = min(grows, 1.0 - (1.0 - prior) * math.exp(-e))
    text = (
        f"Seeing a released record, an adversary's belief that the person's {sensitive.name} is "
        f"{value} can grow from {prior:.0%} (its share in the data) to at most {grows:.0%}"
    )
    if found.disclosure == "both":
        text += f", and shrink to no less than {prior * math.exp(-e):.0%}"
    text += (
        f" (epsilon = {e:.3g} nats, {'two-sided' if found.disclosure == 'both' else 'one-sided'} "
        "lift privacy). This holds exactly for the audited records; "
    )
    held = found.held_out
    if held is None:
        return text + "it was not checked on held-out records."
    lo, hi = held.breach_probability_ci
    return text + (
        f"on records the release was not fitted on, {held.breach_probability:.0%} of them "
        f"(95 % interval {lo:.0%}-{hi:.0%}) fall in a released cell that breaks it."
    )
