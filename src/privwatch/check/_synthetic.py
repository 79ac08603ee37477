r"""A synthetic table checked against the original it was generated from (no row correspondence).

- **The inference attack with a control set** (anonymeter's design, Giomi et al., PoPETs 2023):
  the attacker reads the synthetic table and guesses a person's sensitive value from their
  observed values; it is scored on the original records (which the generator saw) and on the
  control records (which it never saw). The control's success is the baseline: what the
  population's own regularities let anyone infer. The risk is
  :math:`(r_\mathrm{orig} - r_\mathrm{control}) / (1 - r_\mathrm{control})` with Wilson
  intervals (:func:`privwatch.release.inference_attack`). anonymeter's own evaluator compares
  against a *random-guess* baseline as well; the control is the baseline that matters.
- **The exact Bayes attacker trained on the synthetic table** is that attacker: for each observed
  tuple it guesses the value most frequent with it in the synthetic table (the Bayes rule under
  the synthetic table's distribution), the overall mode for a tuple the table lacks. Beside it,
  ``bayes_success`` is the best any attacker can do on the original records knowing their own
  distribution exactly (the ceiling), and ``prior_success`` guessing the mode for everyone.
- **Lift of the synthetic table's cells on the original records**: the cells are the synthetic
  table's distinct observed tuples; the original records whose tuple is one of them fall in it,
  and each cell's log-lift is measured on them (what the synthetic cells would reveal if they
  were a release of the original records).
- **Verbatim copies**: the share of original records whose whole tuple (observed and sensitive)
  appears in the synthetic table, beside the same share of control records (common tuples
  appear in any good synthetic table; copying shows as an excess over the control).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..audit import (
    ATTACK_REFERENCE,
    ATTACK_RISK_THRESHOLD,
    BAYES_REFERENCE,
    Audit,
    release_leakage,
    stable_leakage,
)
from ..exceptions import ValidationError
from ..release import LiftBox, as_text, bayes_attack_success, classic_report, inference_attack
from ._align import _columns

__all__ = ["synthetic_audit", "synthetic_figures"]

SYNTHETIC_ROUTE_REASON = (
    "a synthetic table made elsewhere, checked against the original it was generated from "
    "(privwatch check --synthetic): the tables in memory"
)


def _text(frame: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: as_text(frame[c].reset_index(drop=True)) for c in cols})


def _keys(frame: pd.DataFrame) -> pd.Index:
    joined: pd.Series = frame.astype(str).agg("\x1f".join, axis=1)
    index: pd.Index = pd.Index(joined.to_numpy())
    return index


def _verbatim(orig: pd.DataFrame, syn: pd.DataFrame) -> float:
    """Share of ``orig`` rows whose whole tuple appears in ``syn``."""
    return float(_keys(orig).isin(_keys(syn)).mean()) if len(orig) else 0.0


def _lift(orig: pd.DataFrame, syn: pd.DataFrame, sens: str, obs: list[str],
          epsilon: float | None, disclosure: str) -> dict[str, Any]:  # fmt: skip
    """Log-lift of the synthetic cells on the original records that fall in them."""
    index = pd.Index(_keys(syn[obs]).unique())
    cell = index.get_indexer(_keys(orig[obs]))
    inside = cell >= 0
    s_codes, values = pd.factorize(orig[sens], sort=True)
    counts = np.zeros((len(index), len(values)))
    np.add.at(counts, (cell[inside], s_codes[inside]), 1.0)
    prior = np.bincount(s_codes, minlength=len(values)).astype(float)
    box = LiftBox(prior, [np.arange(len(values))], epsilon or 1.0, disclosure)
    live = counts.sum(1) > 0
    worst = box.worst(counts[live]) if live.any() else np.zeros(0)
    out: dict[str, Any] = {
        "cells": len(index),
        "matched_share": float(inside.mean()),
        "max_log_lift_on_original": float(worst.max()) if worst.size else 0.0,
    }
    if epsilon is not None:
        breaking = counts[live].sum(1)[worst > epsilon + 1e-12].sum()
        out["breach_share_on_original"] = float(breaking / len(orig))
    return out


def _attack(orig: pd.DataFrame, syn: pd.DataFrame, ctl: pd.DataFrame, sens: str,
            obs: list[str], seed: int) -> dict[str, Any]:  # fmt: skip
    res = inference_attack(syn, orig, ctl, obs, sens, rng=seed)
    counts = pd.crosstab(orig[sens].to_numpy(), _keys(orig[obs]).to_numpy())
    prior = float(orig[sens].value_counts(normalize=True).iloc[0])
    bayes = float(bayes_attack_success(counts.to_numpy() / counts.to_numpy().sum()))
    entry = res.to_dict()
    entry.update(
        threshold=ATTACK_RISK_THRESHOLD, rule="upper end of risk_ci <=",
        passes=bool(res.risk_ci[1] <= ATTACK_RISK_THRESHOLD), reference=ATTACK_REFERENCE,
        prior_success=prior, bayes_success=bayes, bayes_leakage_ratio=bayes / prior,
        bayes_leakage_bound=bayes / prior,
        bayes_passes=bool(res.success_targets <= res.success_control_ci[1]),
        bayes_reference=BAYES_REFERENCE, synthetic_bayes_success_original=res.success_targets,
        synthetic_bayes_success_control=res.success_control,
    )  # fmt: skip
    return entry


def synthetic_figures(
    orig: pd.DataFrame,
    syn: pd.DataFrame,
    ctl: pd.DataFrame | None,
    sensitive: list[str],
    observed: list[str],
    epsilon: float | None,
    disclosure: str = "both",
    seed: int = 0,
) -> dict[str, Any]:
    """Every figure of the module docstring, per sensitive column (frames as text)."""
    out: dict[str, Any] = {"kind": "synthetic", "attributes": {}}
    cols = [*observed, *sensitive]
    out["verbatim_share"] = _verbatim(orig[cols], syn[cols])
    out["verbatim_share_control"] = None if ctl is None else _verbatim(ctl[cols], syn[cols])
    for s in sensitive:
        out["attributes"][s] = _lift(orig, syn, s, observed, epsilon, disclosure)
    if ctl is not None:
        out["attack"] = {s: _attack(orig, syn, ctl, s, observed, seed) for s in sensitive}
    return out


def _reasons(fig: dict[str, Any], epsilon: float | None, tolerance: float) -> list[str]:
    reasons = []
    if "attack" not in fig:
        reasons.append(
            "without a control set (records the generator never saw, `control`) the inference "
            "risk cannot be told from what the population lets anyone infer: not judged"
        )
    for s, a in (fig.get("attack") or {}).items():
        if not a["passes"]:
            lo, hi = a["risk_ci"]
            reasons.append(
                f"the inference attack on {s} succeeds on the original records beyond the "
                f"control: risk {a['risk']:.1%} (95 % interval {lo:.1%}-{hi:.1%}), above "
                f"{ATTACK_RISK_THRESHOLD:.0%}"
            )
    for s, lift in fig["attributes"].items():
        share = lift.get("breach_share_on_original")
        if epsilon is not None and share is not None and share > tolerance:
            reasons.append(
                f"{share:.1%} of the original records fall in a synthetic cell whose log-lift "
                f"about {s} breaks epsilon {epsilon:g} on them, above the tolerance "
                f"{tolerance:.0%}"
            )
    return reasons


def synthetic_audit(
    spec: Any, original: pd.DataFrame, synthetic: pd.DataFrame, control: pd.DataFrame | None
) -> tuple[dict[str, Any], Audit]:
    """The synthetic check as an :class:`Audit` (``found`` is None; figures under ``check``)."""
    sens = list(spec.sensitive)
    obs = _columns(original, synthetic, sens, spec.observed, None)
    for s in sens:
        if s not in synthetic.columns:
            raise ValidationError(
                f"`sensitive` must name a column of the synthetic table; got {s!r}."
            )
    if control is not None:
        _columns(original, control, sens, obs, None)
        for s in sens:
            if s not in control.columns:
                raise ValidationError(
                    f"`control` must hold the sensitive column {s!r}, as the original does."
                )
    cols = [*obs, *sens]
    orig, syn = _text(original, cols), _text(synthetic, cols)
    ctl = None if control is None else _text(control, cols)
    fig = synthetic_figures(orig, syn, ctl, sens, obs, spec.epsilon, spec.disclosure, spec.seed)
    worst = max(a["max_log_lift_on_original"] for a in fig["attributes"].values())
    epsilon = spec.epsilon if spec.epsilon is not None else worst
    reasons = _reasons(fig, spec.epsilon, spec.held_out_tolerance)
    # control records whose observed values the attacker's table (the synthetic one) never holds
    unseen = 0 if ctl is None else int((~_keys(ctl[obs]).isin(_keys(syn[obs]))).sum())
    leakage: dict[str, Any] = {
        "status": "not_met" if reasons else "met",
        "reasons": reasons,
        "guarantee": {
            "epsilon": epsilon,
            "disclosure": spec.disclosure,
            "per_value": [],
            "max_log_lift_in_sample": worst,
            "scope": "synthetic cells on the original records",
        },
        "guarantee_in_words": _words(fig),
        "before": release_leakage(orig[sens[0]], orig[obs]).to_dict(),
        "classic": {
            "release": classic_report(syn, obs, sens).to_dict(),
            "input": classic_report(orig, obs, sens).to_dict(),
        }
        if spec.checks
        else None,
        "attack": None
        if control is None
        else {
            "design": "attribute inference with the synthetic table as the attacker's "
            "knowledge, scored on the original records (targets) and on records the "
            "generator never saw (control)",
            "n_targets": len(orig),
            "n_control": len(control),
            "control_unseen_tuples": unseen,
            "attributes": fig["attack"],
        },
    }
    n = len(orig)
    result = Audit(
        route="memory", engine="pandas", route_reason=SYNTHETIC_ROUTE_REASON, settings={},
        summary={"n_records": n, "n_input": n, "n_dropped_missing": 0,
                 "sensitive": sens[0] if len(sens) == 1 else sens, "observed": obs,
                 "n_synthetic": len(syn),
                 "sensitive_counts": {str(k): int(v) for k, v in
                                      orig[sens[0]].value_counts().items()}},
        epsilon=float(epsilon), epsilon_reason="given by the user" if spec.epsilon is not None
        else "the worst log-lift of the synthetic cells on the original records",
        leakage=stable_leakage(leakage, {}), stamp={}, details={"check": fig},
    )  # fmt: skip
    result.details["check"].pop("attack", None)
    return {"observed": obs}, result


def _words(fig: dict[str, Any]) -> str:
    text = (
        f"{fig['verbatim_share']:.1%} of the original records appear verbatim in the synthetic "
        "table"
    )
    if fig["verbatim_share_control"] is not None:
        text += f" (records it never saw: {fig['verbatim_share_control']:.1%})"
    for s, a in (fig.get("attack") or {}).items():
        text += (
            f"; an attacker reading it guesses {s} right for {a['success_targets']:.1%} of the "
            f"original records and {a['success_control']:.1%} of records it never saw "
            f"(risk {a['risk']:.1%})"
        )
    return text + "."
