r"""The learned watchdog's steps on records in memory (Hsu et al. §IV; issue #41 item 3).

Every record's log-lift is cross-fitted (each scored by fold models that did not see it) with
the fold models' spread (:class:`~privwatch.watchdog.Watchdog` on a learned estimator). A
record is flagged when its estimated risk breaks epsilon, then, while the held-out verdict is
not met, when its probability of breaking exceeds ``1 - c`` for the search's credible margins
``c`` (:data:`privwatch.release.search.MARGINS`); the flagged records are merged into one
marker. Each release tried is judged by
:func:`privwatch.estimators.learned_breach` on the log-lift recalibrated on the records' labels,
which the fold models scoring them did not see (:func:`privwatch.estimators.calibrate`, Cox's
logistic recalibration) (the share of the population whose released value,
the record or the marker, has a true lift beyond epsilon, with a 95 % interval) and the one
verdict rule, :func:`privwatch.release.heldout.not_met_reasons`. The marker's own lift counts:
when the flagged records' shares stray beyond epsilon from p(s), every flagged record is in a
breaking cell, and the release is NOT MET unless a wider margin (more records merged) brings
the marker back within the box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._numbers import fmt, pct, pct_ci
from ..estimators import (
    Calibration,
    LearnedBreach,
    calibrate,
    learned_breach,
    margin_flags,
)
from ..exceptions import ValidationError
from ..release import SUPPRESSED, explain_protection, per_value
from ..release.heldout import DRAWS, REPLICATES, not_met_reasons
from ..release.search import MARGINS
from ..watchdog import LearnedWatchdogMechanism, flagged_set_guarantee
from ._leakage import stable_leakage
from ._method import NO_MECHANISM, AuditView, Decision, Measured, Step
from ._spec import AuditSpec
from ._steps import watchdog_release

__all__ = [
    "LearnedRelease",
    "decide_learned",
    "held_out_of_sample",
    "learned_leakage",
    "learned_mechanism",
    "learned_rows",
]


#: Replicates of the fold models' shared error per release tried (each recalibrates every kept
#: record once): the estimate is their mean, so its Monte Carlo error is a tenth of a point.
SHARED_REPLICATES = 200


class _Request(NamedTuple):
    epsilon: float
    disclosure: str
    max_suppressed: float


@dataclass(frozen=True)
class LearnedRelease:
    """The release tried last: its margin (None: point flags), flags, held-out figures, the
    information kept (nats), per-value protection and the reasons it is not met (empty: met)."""

    confidence: float | None
    flags: np.ndarray
    held: LearnedBreach
    information_nats: float
    protection: list[dict[str, Any]]
    reasons: list[str]
    tolerance: float
    disclosure: str
    #: The recalibration of the cross-fitted log-lift on held-out labels (flags and estimate).
    calibration: Calibration | None = None
    #: The log-lift model fitted on every record (its fold models on ``resamples_``): the
    #: scorer a saved mechanism flags new records with.
    scorer: Any = None


def _information(flags: np.ndarray) -> float:
    """I(X; Y) = H(Y) of the release, each kept record its own symbol (mass 1/n)."""
    n = len(flags)
    q = float(flags.mean()) if n else 0.0
    kept = (1.0 - q) * math.log(n) if n else 0.0
    return kept - (q * math.log(q) if q > 0 else 0.0)


def held_out_of_sample(
    spec: AuditSpec,
    epsilon: float,
    log_lift: np.ndarray,
    members: np.ndarray,
    codes: np.ndarray,
    flags: np.ndarray,
    counts: pd.Series,
    n_flagged: int,
) -> tuple[LearnedBreach | None, list[str]]:
    r"""The held-out figures and verdict of a learned watchdog's release of records it could
    not hold (the streamed route), from a uniform sample of them: ``log_lift`` each sampled
    record's cross-fitted log-lift (by the member that did not see it), ``members`` every
    member's log-lift of them (K x records x values), ``codes``/``flags`` their sensitive
    values and flags; ``counts`` every record's sensitive value counted (indexed by the
    values), ``n_flagged`` how many
    were flagged. The members are the K fold models of one split, so the grouped jackknife
    applies as on records in memory (:func:`~privwatch.estimators.fold_deviations`):
    :math:`B_k = \sqrt{(K-1)/K}\,(\hat i_k - \bar i)` drawn as the error shared by every
    record, each score's variance :math:`\sum_k B_k^2\,(1 + 1/(K-1))`; the recalibration on
    the sample's labels, the interval and the verdict rule are those of :func:`decide_learned`
    (the interval's record sampling is the sample's size). None (no figure) when a sensitive
    value is absent from the sample."""
    k = len(members)
    if k < 2 or np.bincount(codes, minlength=log_lift.shape[1]).min() == 0:
        return None, []
    basis = (members - members.mean(axis=0)) * math.sqrt((k - 1) / k)
    sd = np.sqrt((basis**2).sum(axis=0) * (1 + 1 / (k - 1)))
    held = learned_breach(
        log_lift, sd, flags, codes, epsilon, spec.disclosure, folds=k,
        calibration=calibrate(log_lift, codes), draws=DRAWS, rng=spec.seed, shared=basis,
        replicates=SHARED_REPLICATES,
    )  # fmt: skip
    n = int(counts.sum())
    q = n_flagged / n if n else 0.0
    info = (1.0 - q) * math.log(n) - (q * math.log(q) if q > 0 else 0.0) if n else 0.0
    request = _Request(epsilon, spec.disclosure, float(spec.max_suppressed))
    protection = per_value(counts / max(n, 1), epsilon, spec.disclosure)
    reasons = not_met_reasons(request, info, held, float(spec.held_out_tolerance), protection)
    return held, reasons


def decide_learned(spec: AuditSpec, m: Measured, step: Step) -> Decision:
    """The learned watchdog's release of the records in memory, aimed at the held-out verdict."""
    from ..estimators import fold_deviations  # here: the cross-fitting loads scikit-learn

    if m.probe is None or m.records is None:
        raise ValidationError("the learned watchdog needs the records in memory.")
    step("flagging the records, checked on held-out scores")
    wd, scores, score_frame, _, _ = watchdog_release(
        m.probe, m.records, m.epsilon, None, spec.epsilon_max
    )
    strategy = wd.strategy_
    spread = getattr(strategy, "spread", None)  # the fold models' spread (record-level)
    if spread is None:
        raise ValidationError("the learned watchdog needs a learned log-lift estimator.")
    ll = np.asarray(strategy.log_lift, dtype=np.float64)
    sd = np.nan_to_num(np.asarray(spread, dtype=np.float64), nan=0.0)
    labels = pd.Index(wd.sensitive_labels_)
    codes = np.asarray(labels.get_indexer(m.records[m.sensitive]), dtype=np.int64)
    shares = pd.Series(np.bincount(codes, minlength=len(labels)) / len(codes), index=labels)
    protection = per_value(shares, m.epsilon, spec.disclosure)
    tol = float(spec.held_out_tolerance)
    request = _Request(m.epsilon, spec.disclosure, float(spec.max_suppressed))
    folds = int(getattr(strategy, "cv", None) or 5)
    found: LearnedRelease | None = None
    cal = calibrate(ll, codes)  # on held-out labels: the fold models did not see them
    estimator: Any = getattr(strategy, "estimator", None)
    shared = (  # the fitted model's error, shared by the records (see learned_breach)
        fold_deviations(estimator, m.records[list(m.observed)])
        if getattr(estimator, "resample_kind_", None) == "jackknife"
        else None
    )
    for confidence in (None, *MARGINS):
        flags = margin_flags(ll, sd, m.epsilon, spec.disclosure, confidence)
        held = learned_breach(
            ll, sd, flags, codes, m.epsilon, spec.disclosure, folds=folds, calibration=cal,
            draws=DRAWS, rng=spec.seed, shared=shared,
            replicates=REPLICATES if shared is None else SHARED_REPLICATES,
        )  # fmt: skip
        info = _information(flags)
        reasons = not_met_reasons(request, info, held, tol, protection)
        found = LearnedRelease(
            confidence, flags, held, info, protection, reasons, tol, spec.disclosure, cal,
            estimator,
        )  # fmt: skip
        if not reasons or flags.all():
            break
    assert found is not None
    flags = found.flags
    release = m.records[m.observed].astype(object).copy()
    release.loc[flags, :] = SUPPRESSED
    score_frame["flagged"] = flags
    kept_risk = scores.risk[~flags]
    g = flagged_set_guarantee(
        np.bincount(codes, minlength=len(labels)),
        np.bincount(codes[flags], minlength=len(labels)),
        min(float(kept_risk.max()) if kept_risk.size else 0.0, m.epsilon),
        m.epsilon, wd.guarantee_.basis,
    )  # fmt: skip
    guarantee = {
        **g.to_dict(), "epsilon": m.epsilon, "disclosure": spec.disclosure,
        "per_value": protection, "tolerance": tol, "confidence": found.confidence,
    }  # fmt: skip
    return Decision(
        "watchdog", m.epsilon, m.epsilon_reason, flags=flags, risk=score_frame["risk"].to_numpy(),
        release=release, scores=score_frame, guarantee=guarantee, watchdog=wd,
        log_lift=scores.log_lift, detail=found,
        summary={"learned_flags": "point" if found.confidence is None else found.confidence},
    )  # fmt: skip


def _words(m: Measured, found: LearnedRelease) -> str:
    held = found.held
    lo, hi = held.breach_probability_ci
    margin = (
        "when its cross-fitted risk breaks epsilon"
        if found.confidence is None
        else f"when its chance of breaking epsilon exceeds {1 - found.confidence:.1%}"
    )
    return (
        "Released by the privacy watchdog with a learned log-lift (Hsu et al. §IV): a record "
        f"is merged into '*' {margin}, otherwise released unchanged. "
        f"{explain_protection(found.protection, m.sensitive, m.epsilon, found.disclosure)} "
        f"On held-out scores, an estimated {held.breach_probability:.1%} of the population "
        f"has a released value whose lift breaks epsilon (95 % interval {lo:.1%}-{hi:.1%}; "
        f"tolerance {found.tolerance:.0%}); the merged marker's lift is "
        f"{held.marker_log_lift:.3g} nats."
    )


def learned_leakage(spec: AuditSpec, m: Measured, d: Decision) -> dict[str, Any]:
    """The section of leakage.json of the learned watchdog on records in memory."""
    found: LearnedRelease = d.detail
    assert d.watchdog is not None and d.log_lift is not None and m.records is not None
    codes = pd.Index(d.watchdog.sensitive_labels_).get_indexer(m.records[m.sensitive])
    before = float(np.mean(d.log_lift[np.arange(len(codes)), codes]))
    n = len(found.flags)
    leakage = {
        "status": "met" if not found.reasons else "not_met",
        "reasons": list(found.reasons),
        "alternatives": [],
        "guarantee": d.guarantee,
        "guarantee_in_words": _words(m, found),
        "held_out": found.held.to_dict(),
        "before": {"mutual_information_estimate": before},
        "after": None,
    }
    total = math.log(n) if n else 0.0
    utility = {
        "utility_mi": found.information_nats,
        "entropy_observed": total,
        "nmil": 0.0 if total <= 0 else 1.0 - found.information_nats / total,
        "flagged_probability": float(found.flags.mean()) if n else 0.0,
        "information_nats": found.information_nats,
        "information_input_nats": total,
    }
    return stable_leakage(leakage, utility)


def learned_rows(result: AuditView) -> list[tuple[str, str]]:
    """The printed figures of the learned watchdog on records in memory."""
    g, s, held = result.leakage["guarantee"], result.summary, result.leakage["held_out"]
    n = int(s["n_records"])
    margin = (
        "risk > epsilon"
        if g["confidence"] is None
        else (f"chance of breaking > {1 - g['confidence']:.1%}")
    )
    lo, hi = held["breach_probability_ci"]
    u = result.leakage["utility"]
    return [
        ("records", f"{n:,}"),
        ("release method", "privacy watchdog (Hsu et al. §IV), learned log-lift"),
        ("epsilon (threshold), disclosure", f"{fmt(result.epsilon, 3)} nats, {g['disclosure']}"),
        ("records flagged on", margin),
        ("flagged records", f"{s['n_flagged']:,} of {n:,}, merged into '*'"),
        ("lift of the merged marker", f"{fmt(held['marker_log_lift'], 3)} nats"),
        ("information kept, I(X; Y) = H(Y)",
         f"{fmt(u['information_nats'], 3)} of {fmt(u['information_input_nats'], 3)} nats"),
        ("held-out breach probability",
         f"{pct(held['breach_probability'], (hi - lo) / 2)} (95 % {pct_ci(lo, hi)}; "
         f"tolerance {pct(g['tolerance'])})"),
    ]  # fmt: skip


def learned_mechanism(result: AuditView) -> LearnedWatchdogMechanism:
    """The learned watchdog's scorer as a saved mechanism: the model fitted on every record,
    its fold models (for a margin rule), the recalibration, the rule the audit ended with."""
    found: LearnedRelease = result.method_detail
    est = found.scorer
    if est is None or found.calibration is None:
        raise ValidationError(NO_MECHANISM)
    scorer = getattr(est, "best_", est)  # AutoLift: the family it selected
    folds = list(getattr(est, "resamples_", None) or [])
    sensitive = result.settings["sensitive"]
    return LearnedWatchdogMechanism(
        scorer, list(result.settings["observed"]), found.calibration,
        fold_models=folds if found.confidence is not None else [],
        groups=int(getattr(est, "resample_groups_", 5)),
        sensitive=sensitive if isinstance(sensitive, str) else "+".join(sensitive),
        epsilon=float(result.epsilon), disclosure=found.disclosure,
        confidence=found.confidence, status=str(result.leakage["status"]), marker=SUPPRESSED,
        input_name=result.stamp.get("input_name"), input_sha256=result.stamp.get("input_sha256"),
    )  # fmt: skip
