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
from typing import Any

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


def run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """Fit the four estimators, draw Fig. 1-2 into ``out``, return the numbers."""
    from ..plotting import plot_lift_scatter, plot_tradeoff, save

    df = load_compas()
    rng = np.random.default_rng(cfg["seed"])
    order = rng.permutation(len(df))
    n_train = round(cfg["train_fraction"] * len(df))
    train, test = df.iloc[order[:n_train]], df.iloc[order[n_train:]]
    obs = cfg["observed"]
    x_tr, s_tr = train[obs], train["race_code"].to_numpy()
    x_te, s_te = test[obs], test["race_code"].to_numpy()
    eps = cfg["epsilon"]

    def make(kind: str, setting: str, seed: int) -> object:
        params: dict[str, Any] = {
            k: (tuple(v) if isinstance(v, list) else v) for k, v in cfg[setting][kind].items()
        }
        return (ClassifierLift if kind == "classifier" else DVLift)(rng=seed, **params)

    fitted: dict[str, object] = {}
    results: dict[str, Any] = {"n_train": len(train), "n_test": len(test)}
    timing, mi = {}, {}
    for setting in ("paper_settings", "best_settings"):
        for kind in ("classifier", "dv"):
            name = f"{kind} ({setting.split('_')[0]})"
            est = make(kind, setting, cfg["seed"])
            t0 = time.perf_counter()
            est.fit(x_tr, s_tr)  # type: ignore[attr-defined]
            timing[name] = time.perf_counter() - t0
            fitted[name] = est
            mi[name] = {
                "mean_log_lift_test": est.mutual_information(x_te, s_te),  # type: ignore[attr-defined]
                "mean_log_lift_train": est.mutual_information(x_tr, s_tr),  # type: ignore[attr-defined]
            }
            if kind == "dv":
                mi[name]["dv_bound_test"] = est.bound(x_te, s_te)  # type: ignore[attr-defined]
                mi[name]["normalization_error"] = est.normalization_error_  # type: ignore[attr-defined]
    binned_tr = bin_columns(train, COMPAS_BINS)[obs]
    binned_te = bin_columns(test, COMPAS_BINS)[obs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        plug = PluginLift(smoothing=0.5).fit(binned_tr, s_tr)
        ll_plug = plug.log_lift(binned_te)
    known = ~np.isnan(ll_plug).any(axis=1)
    mi["plugin (binned, smoothing 0.5)"] = {
        "mean_log_lift_test": float(np.mean(ll_plug[known][np.arange(known.sum()), s_te[known]])),
        "unknown_test_fraction": float(1 - known.mean()),
    }
    results["fit_seconds"] = timing
    results["mutual_information_estimates"] = mi

    # Fig. 1 and Tables I-IV with the best DV estimator, on all records
    best = fitted["dv (best)"]
    everything = pd.concat([train, test])
    ll_all = best.log_lift(everything[obs])  # type: ignore[attr-defined]
    risk = np.abs(ll_all).max(axis=1)
    ax = plot_lift_scatter(
        ll_all,
        epsilon=eps,
        highlight=risk > eps,
        labels=("i(S=0 African-American, x)", "i(S=1 Caucasian, x)"),
    )
    ax.set_title(
        f"COMPAS, DVLift (privwatch settings)\n{int((risk > eps).sum())} of "
        f"{len(risk)} records outside the eps = {eps} square"
    )
    save(ax, out / "fig1_lift_scatter.png")
    ll_paper = fitted["dv (paper)"].log_lift(everything[obs])  # type: ignore[attr-defined]
    ax = plot_lift_scatter(
        ll_paper,
        epsilon=eps,
        highlight=np.abs(ll_paper).max(axis=1) > eps,
        labels=("i(S=0 African-American, x)", "i(S=1 Caucasian, x)"),
    )
    ax.set_title("COMPAS, DVLift with the paper's settings")
    save(ax, out / "fig1_lift_scatter_paper_settings.png")
    results["extreme_records"] = corners(ll_all, everything)
    # Tables III-IV: with a binary S, sum_s P(s) exp(i(s, x)) = 1, so i(0, x) ~ 0 forces i(1, x) ~ 0
    p_s = np.bincount(s_tr, minlength=2) / len(s_tr)
    norm = np.exp(ll_all) @ p_s
    results["lift_normalisation"] = {
        "p_s": p_s.tolist(),
        "max_abs_sum_p_s_lift_minus_1": float(np.max(np.abs(norm - 1))),
        "table_III_max_i1": max(
            r["i1"] for r in results["extreme_records"]["III: i(0,x) ~ 0, high i(1,x)"]
        ),
        "table_IV_max_i0": max(
            r["i0"] for r in results["extreme_records"]["IV: i(1,x) ~ 0, high i(0,x)"]
        ),
    }

    # Fig. 2: utility vs gamma over eps, train and test, for each fitted estimator
    grid = np.linspace(**cfg["epsilons"])
    curves: dict[str, dict[str, list[float]]] = {}
    plot_data = {}
    for name, est in fitted.items():
        r_tr = est.score_samples(x_tr)  # type: ignore[attr-defined]
        r_te = est.score_samples(x_te)  # type: ignore[attr-defined]
        tr = record_tradeoff(r_tr, s_tr, grid)
        te = record_tradeoff(r_te, s_te, grid)
        rows = {
            "epsilon": tr.thresholds.tolist(),
            "train_utility": tr.utility_mi.tolist(),
            "train_gamma": tr.gamma_bound.tolist(),
            "test_utility": te.utility_mi.tolist(),
            "test_gamma": te.gamma_bound.tolist(),
            "train_flagged": tr.flagged_probability.tolist(),
            "test_flagged": te.flagged_probability.tolist(),
        }
        curves[name] = rows
        if "best" in name or "paper" in name:
            plot_data[f"{name} train"] = (rows["train_gamma"], rows["train_utility"])
            plot_data[f"{name} test"] = (rows["test_gamma"], rows["test_utility"])
    results["tradeoff"] = curves
    results["first_infinite_gamma_epsilon"] = {
        name: next(
            (e for e, g in zip(c["epsilon"], c["train_gamma"], strict=True) if g == np.inf), None
        )
        for name, c in curves.items()
    }
    inf_dv = results["first_infinite_gamma_epsilon"]["dv (best)"]
    dv_only = {k: v for k, v in plot_data.items() if k.startswith("dv")}
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

    # flagged fraction at eps with an interval over bootstrap training runs
    fractions = []
    for b in range(cfg["bootstrap_runs"]):
        g = np.random.default_rng(100 + b)
        idx = g.integers(0, len(train), len(train))
        est = DVLift(rng=100 + b).fit(x_tr.iloc[idx], s_tr[idx])
        fractions.append(float((est.score_samples(x_te) > eps).mean()))
    results["flagged_fraction_at_epsilon"] = {
        "epsilon": eps,
        "estimator": "DVLift (privwatch settings), test records",
        "runs": fractions,
        "mean": float(np.mean(fractions)),
        "interval_95": [float(np.quantile(fractions, 0.025)), float(np.quantile(fractions, 0.975))],
        "single_fit_train": float((best.score_samples(x_tr) > eps).mean()),  # type: ignore[attr-defined]
        "single_fit_test": float((best.score_samples(x_te) > eps).mean()),  # type: ignore[attr-defined]
    }
    return results
