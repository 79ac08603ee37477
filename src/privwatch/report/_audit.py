"""The audit: fit the watchdog on a table, choose epsilon, score, release and report leakage."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..estimators import ClassifierLift, DVLift, LiftEstimator
from ..exceptions import PrivacyWarning, ValidationError
from ..preprocessing import DEFAULT_MAX_LEVELS, BinSpec
from ..watchdog import Watchdog, record_tradeoff, tradeoff
from ..watchdog._results import RecordScores
from ._prepare import prepare_table

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
            return float(row["epsilon"]), (
                f"smallest epsilon on the tradeoff curve whose release keeps at least "
                f"{1 - TARGET_LOSS:.0%} of the information in the observed columns "
                f"(NMIL = {row['nmil']:.3f}); its exact lift-privacy level is "
                f"{row['optimal_epsilon']:.3f} nats"
            )
    else:
        ok = curve[curve["flagged_fraction"] <= TARGET_LOSS]
        if len(ok):
            row = ok.iloc[0]
            return float(row["epsilon"]), (
                f"smallest epsilon on the tradeoff curve that releases at least "
                f"{1 - TARGET_LOSS:.0%} of the records unchanged "
                f"({row['flagged_fraction']:.1%} flagged)"
            )
    row = curve.iloc[-1]
    return float(row["epsilon"]), (
        f"largest epsilon on the grid, since none loses at most {TARGET_LOSS:.0%}; the data "
        "leak strongly: consider coarser observed columns"
    )


def audit(
    df: pd.DataFrame,
    sensitive: str,
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
) -> AuditResult:
    """Run the privacy watchdog audit of ``df`` (see the CLI's ``privwatch audit``).

    With ``epsilon=None`` the tradeoff curve proposes one (see :data:`TARGET_LOSS`) and the
    reason is returned in ``epsilon_reason``.
    """
    say = step or (lambda _msg: None)
    est = _estimator(estimator, rng)
    say("preparing the data")
    frame, cols, counts = prepare_table(
        df, sensitive, observed, bins=bins, missing=missing, force=force
    )
    say("estimating the log-lift")
    probe = Watchdog(epsilon=math.inf, max_levels=max_levels, estimator=est, rng=rng)
    probe.fit(frame, sensitive, cols)
    risk = probe.score_samples(frame).risk
    finite = risk[np.isfinite(risk)]
    top = float(np.quantile(finite, 0.999)) if finite.size else 1.0
    grid = np.unique(np.round(np.linspace(0.02, max(top, 0.1) * 1.05, 40), 4))
    say("computing the tradeoff curve")
    if est is None:
        curve = tradeoff(probe.joint_.p, grid).to_frame()
        curve["flagged_fraction"] = curve["flagged_probability"]
    else:
        curve = record_tradeoff(risk, grid)
    reason = "given by the user"
    if epsilon is None:
        epsilon, reason = _choose_epsilon(curve, est is None)
    say("fitting the watchdog and releasing")
    # the log-lift is already estimated on these records: only the threshold changes
    wd = probe.set_params(delta=delta, epsilon_max=epsilon_max).rethreshold(epsilon)
    scores: RecordScores = wd.score_samples(frame)
    flags = wd.flag(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        release = wd.transform(frame)
    score_frame = scores.to_frame().drop(columns=["known"])
    score_frame["flagged"] = flags
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
    if est is None:
        leakage["before"] = wd.leakage_before_.to_dict()
        leakage["after"] = wd.leakage_after_.to_dict()
        leakage["utility"] = wd.utility_.to_dict()
        summary["n_observed_symbols"] = int(wd.encoder_.n_symbols)
    else:
        ll = scores.log_lift
        codes = pd.Index(wd.sensitive_labels_).get_indexer(frame[sensitive])
        leakage["before"] = {
            "mutual_information_estimate": float(np.mean(ll[np.arange(len(codes)), codes]))
        }
        leakage["after"] = {"note": "exact leakage of the release needs the plug-in estimator"}
        leakage["utility"] = record_tradeoff(scores.risk, [epsilon]).iloc[0].to_dict()
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
    )
