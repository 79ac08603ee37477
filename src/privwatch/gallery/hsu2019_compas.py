"""Hsu, Asoodeh, Calmon Sec. IV-B on COMPAS with neural log-lift estimators (Fig. 1-2, Tables I-IV).

5,278 records (ProPublica filter, African-American S=0 / Caucasian S=1); observed sex, age,
priors count, length of stay, decile score (numeric columns standardized, sex one-hot; fitted on
the training split only); 70/30 split. Estimators: the paper's settings (App. E) and privwatch's
defaults, for ClassifierLift and DVLift. Produces the log-lift scatter with the eps = 0.85 square
(Fig. 1), the extreme records of each corner (Tables I-IV), the utility / leakage-bound tradeoff
over eps on train and test (Fig. 2, with the epsilon beyond which gamma is infinite), the flagged
fraction at eps = 0.85 with an interval over bootstrap training runs, and I(S;X) by each
estimator.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .. import PrivacyWarning, bin_columns
from ..datasets import COMPAS_BINS, load_compas
from ..estimators import ClassifierLift, DVLift, PluginLift
from ..watchdog import record_tradeoff

__all__ = ["corners", "run"]


def corners(ll: np.ndarray, frame: pd.DataFrame, k: int = 6) -> dict[str, list[dict[str, Any]]]:
    """The ``k`` most extreme records of each corner of Fig. 1 (the rows of Tables I-IV)."""
    i0, i1 = ll[:, 0], ll[:, 1]
    picks = {
        "I: high i(0,x), low i(1,x)": np.argsort(-(i0 - i1)),
        "II: low i(0,x), high i(1,x)": np.argsort(-(i1 - i0)),
        "III: i(0,x) ~ 0, high i(1,x)": np.argsort(np.abs(i0) - i1),
        "IV: i(1,x) ~ 0, high i(0,x)": np.argsort(np.abs(i1) - i0),
    }
    cols = ["sex", "race", "age", "priors_count", "length_of_stay", "decile_score"]
    out: dict[str, list[dict[str, Any]]] = {}
    for name, order in picks.items():
        rows: list[dict[str, Any]] = [
            {str(c): v for c, v in r.items()}
            for r in frame.iloc[order[:k]][cols].to_dict("records")
        ]
        for r, j in zip(rows, order[:k], strict=True):
            r["i0"], r["i1"] = round(float(i0[j]), 3), round(float(i1[j]), 3)
        out[name] = rows
    return out


class _Split(NamedTuple):
    """The 70/30 split of the records: the frames, and their observed columns and S codes."""

    train: pd.DataFrame
    test: pd.DataFrame
    x_tr: pd.DataFrame
    s_tr: np.ndarray
    x_te: pd.DataFrame
    s_te: np.ndarray


def _split(df: pd.DataFrame, cfg: dict[str, Any]) -> _Split:
    order = np.random.default_rng(cfg["seed"]).permutation(len(df))
    n_train = round(cfg["train_fraction"] * len(df))
    train, test = df.iloc[order[:n_train]], df.iloc[order[n_train:]]
    obs = cfg["observed"]
    return _Split(
        train,
        test,
        train[obs],
        train["race_code"].to_numpy(),
        test[obs],
        test["race_code"].to_numpy(),
    )


def _estimator(cfg: dict[str, Any], kind: str, setting: str) -> Any:
    """The unfitted ClassifierLift (``kind`` "classifier") or DVLift ("dv") of ``setting``."""
    params: dict[str, Any] = {
        k: (tuple(v) if isinstance(v, list) else v) for k, v in cfg[setting][kind].items()
    }
    return (ClassifierLift if kind == "classifier" else DVLift)(rng=cfg["seed"], **params)


def _fit_estimators(
    cfg: dict[str, Any], d: _Split
) -> tuple[dict[str, Any], dict[str, float], dict[str, dict[str, float]]]:
    """The four neural estimators (paper and privwatch settings, classifier and DV) fitted on the
    training split: the fitted estimators, their fit times and their I(S;X) estimates."""
    fitted: dict[str, Any] = {}
    timing, mi = {}, {}
    for setting in ("paper_settings", "best_settings"):
        for kind in ("classifier", "dv"):
            name = f"{kind} ({setting.split('_')[0]})"
            est = _estimator(cfg, kind, setting)
            t0 = time.perf_counter()
            est.fit(d.x_tr, d.s_tr)
            timing[name] = time.perf_counter() - t0
            fitted[name] = est
            mi[name] = {
                "mean_log_lift_test": est.mutual_information(d.x_te, d.s_te),
                "mean_log_lift_train": est.mutual_information(d.x_tr, d.s_tr),
            }
            if kind == "dv":
                mi[name]["dv_bound_test"] = est.bound(d.x_te, d.s_te)
                mi[name]["normalization_error"] = est.normalization_error_
    return fitted, timing, mi


def _plugin_estimate(d: _Split, obs: list[str]) -> dict[str, float]:
    """I(S;X) by the plug-in lift on the binned columns (smoothing 0.5), on the test records
    whose tuple the training split holds."""
    binned_tr = bin_columns(d.train, COMPAS_BINS)[obs]
    binned_te = bin_columns(d.test, COMPAS_BINS)[obs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        plug = PluginLift(smoothing=0.5).fit(binned_tr, d.s_tr)
        ll_plug = plug.log_lift(binned_te)
    known = ~np.isnan(ll_plug).any(axis=1)
    s_te = d.s_te
    return {
        "mean_log_lift_test": float(np.mean(ll_plug[known][np.arange(known.sum()), s_te[known]])),
        "unknown_test_fraction": float(1 - known.mean()),
    }


_LABELS = ("i(S=0 African-American, x)", "i(S=1 Caucasian, x)")


def _draw_lift_scatters(fitted: dict[str, Any], x_all: pd.DataFrame, eps: float, out: Path) -> Any:
    """Fig. 1 with the best DV estimator and with the paper's settings, on all records; returns
    the best one's log-lifts."""
    from ..plotting import plot_lift_scatter, save

    ll_all = fitted["dv (best)"].log_lift(x_all)
    risk = np.abs(ll_all).max(axis=1)
    ax = plot_lift_scatter(ll_all, epsilon=eps, highlight=risk > eps, labels=_LABELS)
    ax.set_title(
        f"COMPAS, DVLift (privwatch settings)\n{int((risk > eps).sum())} of "
        f"{len(risk)} records outside the eps = {eps} square"
    )
    save(ax, out / "fig1_lift_scatter.png")
    ll_paper = fitted["dv (paper)"].log_lift(x_all)
    ax = plot_lift_scatter(
        ll_paper, epsilon=eps, highlight=np.abs(ll_paper).max(axis=1) > eps, labels=_LABELS
    )
    ax.set_title("COMPAS, DVLift with the paper's settings")
    save(ax, out / "fig1_lift_scatter_paper_settings.png")
    return ll_all


def _lift_normalisation(
    ll_all: np.ndarray, s_tr: np.ndarray, extreme: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """Tables III-IV: with a binary S, sum_s P(s) exp(i(s, x)) = 1, so i(0, x) ~ 0 forces
    i(1, x) ~ 0."""
    p_s = np.bincount(s_tr, minlength=2) / len(s_tr)
    norm = np.exp(ll_all) @ p_s
    return {
        "p_s": p_s.tolist(),
        "max_abs_sum_p_s_lift_minus_1": float(np.max(np.abs(norm - 1))),
        "table_III_max_i1": max(r["i1"] for r in extreme["III: i(0,x) ~ 0, high i(1,x)"]),
        "table_IV_max_i0": max(r["i0"] for r in extreme["IV: i(1,x) ~ 0, high i(0,x)"]),
    }


def _tradeoffs(
    fitted: dict[str, Any], d: _Split, grid: np.ndarray
) -> dict[str, dict[str, list[float]]]:
    """Fig. 2's numbers: utility, gamma and flagged probability over eps, train and test, for
    each fitted estimator."""
    curves: dict[str, dict[str, list[float]]] = {}
    for name, est in fitted.items():
        tr = record_tradeoff(est.score_samples(d.x_tr), d.s_tr, grid)
        te = record_tradeoff(est.score_samples(d.x_te), d.s_te, grid)
        curves[name] = {
            "epsilon": tr.thresholds.tolist(),
            "train_utility": tr.utility_mi.tolist(),
            "train_gamma": tr.gamma_bound.tolist(),
            "test_utility": te.utility_mi.tolist(),
            "test_gamma": te.gamma_bound.tolist(),
            "train_flagged": tr.flagged_probability.tolist(),
            "test_flagged": te.flagged_probability.tolist(),
        }
    return curves


def _draw_tradeoff(curves: dict[str, dict[str, list[float]]], inf_dv: float, out: Path) -> None:
    """Fig. 2: utility against the leakage bound over eps for the two DV estimators, train and
    test (points with gamma = inf left out)."""
    from ..plotting import plot_tradeoff, save

    dv_only = {}
    for name, rows in curves.items():
        if name.startswith("dv"):  # the paper settings and privwatch's
            dv_only[f"{name} train"] = (rows["train_gamma"], rows["train_utility"])
            dv_only[f"{name} test"] = (rows["test_gamma"], rows["test_utility"])
    ax = plot_tradeoff(
        {k: (np.where(np.isfinite(x), x, np.nan), y) for k, (x, y) in dv_only.items()},
        xlabel="leakage bound gamma (Prop. 2), nats; points with gamma = inf omitted",
    )
    ax.set_title(
        "COMPAS: utility I(X;Y) (eq. 11) vs leakage bound over eps, DVLift\n"
        f"gamma = inf (Prop. 2 vacuous) for every eps >= {inf_dv:.2f} (train, privwatch settings)",
        fontsize=9,
    )
    save(ax, out / "fig2_tradeoff.png")


def _flagged_fraction(cfg: dict[str, Any], d: _Split, best: Any) -> dict[str, Any]:
    """The fraction of test records flagged at eps, with an interval over bootstrap training
    runs of DVLift (privwatch settings), beside the single fit's."""
    eps = cfg["epsilon"]
    fractions = []
    for b in range(cfg["bootstrap_runs"]):
        g = np.random.default_rng(100 + b)
        idx = g.integers(0, len(d.train), len(d.train))
        est = DVLift(rng=100 + b).fit(d.x_tr.iloc[idx], d.s_tr[idx])
        fractions.append(float((est.score_samples(d.x_te) > eps).mean()))
    return {
        "epsilon": eps,
        "estimator": "DVLift (privwatch settings), test records",
        "runs": fractions,
        "mean": float(np.mean(fractions)),
        "interval_95": [float(np.quantile(fractions, 0.025)), float(np.quantile(fractions, 0.975))],
        "single_fit_train": float((best.score_samples(d.x_tr) > eps).mean()),
        "single_fit_test": float((best.score_samples(d.x_te) > eps).mean()),
    }


def run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """Fit the four estimators, draw Fig. 1-2 into ``out``, return the numbers."""
    d = _split(load_compas(), cfg)
    fitted, timing, mi = _fit_estimators(cfg, d)
    mi["plugin (binned, smoothing 0.5)"] = _plugin_estimate(d, cfg["observed"])
    results: dict[str, Any] = {"n_train": len(d.train), "n_test": len(d.test)}
    results["fit_seconds"] = timing
    results["mutual_information_estimates"] = mi
    everything = pd.concat([d.train, d.test])
    ll_all = _draw_lift_scatters(fitted, everything[cfg["observed"]], cfg["epsilon"], out)
    results["extreme_records"] = corners(ll_all, everything)
    results["lift_normalisation"] = _lift_normalisation(ll_all, d.s_tr, results["extreme_records"])
    curves = _tradeoffs(fitted, d, np.linspace(**cfg["epsilons"]))
    results["tradeoff"] = curves
    results["first_infinite_gamma_epsilon"] = {
        name: next(
            (e for e, g in zip(c["epsilon"], c["train_gamma"], strict=True) if g == np.inf), None
        )
        for name, c in curves.items()
    }
    _draw_tradeoff(curves, results["first_infinite_gamma_epsilon"]["dv (best)"], out)
    results["flagged_fraction_at_epsilon"] = _flagged_fraction(cfg, d, fitted["dv (best)"])
    return results
