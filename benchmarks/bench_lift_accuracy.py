"""Accuracy of the log-lift estimators where the truth is known (issue: log-lift from data).

Continuous: S in {0, 1}, P(S=1) = 0.4; X | S = s an equal mixture of N(mu_{s,c}, I_8), c = 1, 2,
every mu drawn from N(0, 0.3^2 I); true log-lift in closed form; 5,000 training and 3,000 test
samples; seeds 0-4. Discrete: |S| = 2, |X| = 200, p[s, x] ~ flat Dirichlet, 5,000 training and
5,000 test samples; seeds 0-4. Reported: RMSE of the log-lift over every (test record, s) and the
agreement of the eps = 0.5 flags (max_s |i| > 0.5) with the true flags.

Run: python benchmarks/bench_lift_accuracy.py
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

from privwatch import PrivacyWarning, bin_columns
from privwatch.estimators import ClassifierLift, DVLift, PluginLift
from privwatch.measures import log_lift

EPS = 0.5
SEEDS = range(5)
PRIOR = np.array([0.6, 0.4])


def mixture_data(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    mus = rng.normal(0.0, 0.3, size=(2, 2, 8))

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        s = (rng.random(n) < PRIOR[1]).astype(int)
        c = rng.integers(0, 2, n)
        return mus[s, c] + rng.standard_normal((n, 8)), s

    def truth(x: np.ndarray) -> np.ndarray:
        logp = np.stack(
            [
                logsumexp([-0.5 * ((x - mus[s, c]) ** 2).sum(1) for c in range(2)], axis=0)
                for s in range(2)
            ],
            axis=1,
        )
        return logp - logsumexp(logp + np.log(PRIOR), axis=1)[:, None]

    x_tr, s_tr = draw(5000)
    x_te, s_te = draw(3000)
    return x_tr, s_tr, x_te, s_te, truth(x_te)


def discrete_data(seed: int) -> tuple[object, ...]:
    rng = np.random.default_rng(1000 + seed)
    p = rng.dirichlet(np.ones(400)).reshape(2, 200)
    truth_table = log_lift(p)

    def draw(n: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        cells = rng.choice(400, size=n, p=p.ravel())
        s, x = np.divmod(cells, 200)
        return pd.DataFrame({"x": [f"v{v:03d}" for v in x]}), s, x

    x_tr, s_tr, _ = draw(5000)
    x_te, s_te, sym = draw(5000)
    return x_tr, s_tr, x_te, s_te, truth_table[:, sym].T


def score(ll: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    unknown = np.isnan(ll).any(axis=1)
    ll = np.where(np.isnan(ll), 0.0, ll)  # unseen cells: the prior (log-lift 0)
    finite = np.isfinite(truth).all(axis=1) & np.isfinite(ll).all(axis=1)
    err = (ll - truth)[finite]
    flags = np.abs(ll).max(axis=1) > EPS
    true_flags = np.abs(truth).max(axis=1) > EPS
    return {
        "rmse": float(np.sqrt(np.mean(err**2))),
        "flag_agreement": float(np.mean(flags == true_flags)),
        "unknown_fraction": float(unknown.mean()),
        "excluded_infinite_fraction": float(1 - finite.mean()),
    }


def estimators(seed: int, continuous: bool) -> dict[str, object]:
    logreg = make_pipeline(
        PolynomialFeatures(2), StandardScaler(), LogisticRegression(max_iter=5000)
    )
    out: dict[str, object] = {
        "ClassifierLift": ClassifierLift(rng=seed),
        "DVLift (dv)": DVLift(rng=seed),
        "DVLift (nwj)": DVLift(objective="nwj", rng=seed),
    }
    if continuous:
        out["baseline: logistic regression, quadratic features"] = ClassifierLift(
            classifier=logreg, rng=seed
        )
        out["baseline: plug-in on median-binned data"] = "binned"
    else:
        out["PluginLift"] = PluginLift()
        out["PluginLift (smoothing 0.5)"] = PluginLift(smoothing=0.5)
    return out


def run_case(name: str, continuous: bool) -> dict[str, object]:
    per: dict[str, list[dict[str, float]]] = {}
    for seed in SEEDS:
        data = mixture_data(seed) if continuous else discrete_data(seed)
        x_tr, s_tr, x_te, _, truth = data
        for label, est in estimators(seed, continuous).items():
            t0 = time.perf_counter()
            if est == "binned":
                cols = {f"x{j}": 2 for j in range(8)}
                tr = bin_columns(pd.DataFrame(x_tr, columns=list(cols)), cols)
                edges = {c: [float(np.median(x_tr[:, j]))] for j, c in enumerate(cols)}
                tr = bin_columns(pd.DataFrame(x_tr, columns=list(cols)), edges)
                te = bin_columns(pd.DataFrame(x_te, columns=list(cols)), edges)
                plug = PluginLift().fit(tr, s_tr)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyWarning)
                    ll = plug.log_lift(te)
            else:
                est.fit(x_tr, s_tr)  # type: ignore[union-attr]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyWarning)
                    ll = est.log_lift(x_te)  # type: ignore[union-attr]
            res = score(ll, truth)
            res["fit_seconds"] = time.perf_counter() - t0
            per.setdefault(label, []).append(res)
            print(
                f"{name} seed {seed} {label:55s} rmse {res['rmse']:.4f} "
                f"agree {res['flag_agreement']:.4f} ({res['fit_seconds']:.1f}s)",
                flush=True,
            )
    summary = {
        label: {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
        | {
            "rmse_per_seed": [r["rmse"] for r in runs],
            "agreement_per_seed": [r["flag_agreement"] for r in runs],
        }
        for label, runs in per.items()
    }
    if continuous:
        true_median = float(
            np.median([np.median(np.abs(mixture_data(s)[4]).max(axis=1)) for s in SEEDS])
        )
        summary["true_median_abs_log_lift"] = true_median  # type: ignore[assignment]
    return summary


def main() -> None:
    results = {"continuous": run_case("continuous", True), "discrete": run_case("discrete", False)}
    print(json.dumps(results, indent=2))
    print(f"written to {write('lift_accuracy', results)}")


if __name__ == "__main__":
    main()
