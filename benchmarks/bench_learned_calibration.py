"""Calibration of the learned watchdog's held-out verdict (issue #41 item 3) on known densities.

For each setting and seed: draw n records from a known model, run ``privwatch.audit.run`` with
a learned estimator (the learned ``watchdog`` method), and compute the **true** breach share of
its release by Monte Carlo on a fresh sample of ``M`` records from the same model with the true
posterior: the fitted rule (the full-data model, recalibrated, with the margin the audit ended
with: ``Audit.mechanism().flags``, as ``privwatch apply`` flags new records) flags the fresh
records; a kept record breaks when its true max_s |log p(s|x)/p(s)| exceeds epsilon; the
merged marker breaks when the true p(s | flagged) leaves the lift box, and then every flagged
record counts. Reported: mean bias (estimate - truth), 95 % coverage, MET share where the truth
is 0, MET share where the truth exceeds 2x the tolerance (5 %).

    .venv/bin/python benchmarks/bench_learned_calibration.py [--seeds 20] [--estimator NAME]
        [--only SETTING] [--out FILE]

Writes benchmarks/results/learned_calibration.json (rows per seed and the summary; ``--out``:
another file, e.g. one per setting run side by side).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from privwatch import audit

ROOT = Path(__file__).resolve().parents[1]
TOL = 0.05
Model = Callable[[int, np.random.Generator], tuple[pd.DataFrame, np.ndarray]]


def mixture(d: int, sep: float, share: float) -> Model:
    """s ~ Bernoulli(share); x | s ~ N(s sep 1_d, I): p(s=1 | x) is logistic in sum(x)."""

    def draw(n: int, g: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
        s = (g.random(n) < share).astype(int)
        x = g.standard_normal((n, d)) + s[:, None] * sep
        logit = np.log(share / (1 - share)) + sep * x.sum(1) - d * sep**2 / 2
        return _frame(x, s), 1 / (1 + np.exp(-logit))

    return draw


def logistic(beta: np.ndarray, intercept: float, uniform: bool = False) -> Model:
    """x ~ N(0, I) (or U(-1, 1)); p(s=1 | x) = sigmoid(intercept + beta . x)."""

    def draw(n: int, g: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
        d = len(beta)
        x = g.uniform(-1, 1, (n, d)) if uniform else g.standard_normal((n, d))
        post = 1 / (1 + np.exp(-(intercept + x @ beta)))
        return _frame(x, (g.random(n) < post).astype(int)), post

    return draw


def _frame(x: np.ndarray, s: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(x, columns=[f"x{i}" for i in range(x.shape[1])]).assign(s=s)


SETTINGS: dict[str, tuple[Model, float, str]] = {
    # the case: 4 columns, s share 0.3, epsilon 0.5
    "mixture4 (share 0.3, eps 0.5)": (mixture(4, 0.35, 0.3), 0.5, "both"),
    "logistic10 (eps 0.5)": (logistic(np.linspace(0.25, -0.2, 10), -0.8), 0.5, "both"),
    "rare 5 % (mixture4, eps 1)": (mixture(4, 0.6, 0.05), 1.0, "both"),
    # truth 0: every true |log-lift| <= 0.34 < epsilon
    "null10 uniform (eps 0.5)": (logistic(np.full(10, 0.04), 0.0, uniform=True), 0.5, "both"),
    # truth > 2x tolerance: one-sided, the marker is pulled to the 30 % value
    "marker breaks (mixture4 sep 0.8, positive)": (mixture(4, 0.8, 0.3), 0.5, "positive"),
}


def true_breach(
    result: audit.Audit, model: Model, eps: float, disc: str, g: np.random.Generator, m: int
) -> float:
    fresh, post1 = model(m, g)
    # the rule the audit ended with, as its saved mechanism applies it to new records
    flags = result.mechanism().flags(fresh.drop(columns="s"))  # type: ignore[attr-defined]
    prior1 = float(post1.mean())  # the population's p(s = 1), by Monte Carlo
    post = np.column_stack([1 - post1, post1])
    prior = np.array([1 - prior1, prior1])
    true_ll = np.log(post / prior)
    faces = true_ll if disc == "positive" else np.abs(true_ll)
    kept_breaks = (~flags) & (faces.max(1) > eps)
    breach = float(kept_breaks.mean())
    if flags.any():
        marker = np.log(post[flags].mean(0) / prior)
        mf = marker if disc == "positive" else np.abs(marker)
        if mf.max() > eps:
            breach += float(flags.mean())
    return breach


def summarise(name: str, mine: list[dict], n: int, estimator: str, seconds: float) -> dict:
    """The setting's figures over the seeds run so far."""
    zero = [x for x in mine if x["truth"] == 0]
    high = [x for x in mine if x["truth"] > 2 * TOL]
    return {
        "setting": name, "seeds": len(mine), "n": n, "estimator": estimator,
        "truth_mean": float(np.mean([x["truth"] for x in mine])),
        "estimate_mean": float(np.mean([x["estimate"] for x in mine])),
        "bias": float(np.mean([x["estimate"] - x["truth"] for x in mine])),
        "coverage": float(np.mean([x["lo"] <= x["truth"] <= x["hi"] for x in mine])),
        "met": float(np.mean([x["status"] == "met" for x in mine])),
        "truth_zero_seeds": len(zero),
        "met_where_truth_zero": (
            float(np.mean([x["status"] == "met" for x in zero])) if zero else None
        ),
        "truth_above_2tol_seeds": len(high),
        "met_where_truth_above_2tol": (
            float(np.mean([x["status"] == "met" for x in high])) if high else None
        ),
        "seconds": round(seconds, 1),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--fresh", type=int, default=200_000)
    ap.add_argument("--estimator", default="quadratic_logistic")
    ap.add_argument("--only", default=None, help="run the settings whose name contains this")
    ap.add_argument("--out", default=None, help="results file (default: the one below)")
    a = ap.parse_args()
    out = Path(a.out) if a.out else ROOT / "benchmarks" / "results" / "learned_calibration.json"
    rows: list[dict] = []
    summary: list[dict] = []
    for name, (model, eps, disc) in SETTINGS.items():
        if a.only and a.only not in name:
            continue
        t = time.perf_counter()
        for seed in range(a.seeds):
            g = np.random.default_rng(1000 + seed)
            df, _ = model(a.n, g)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = audit.run(
                    source=df, sensitive="s", epsilon=eps, disclosure=disc,
                    estimator=a.estimator, checks=False, seed=seed,
                )  # fmt: skip
            held = r.leakage["held_out"]
            truth = true_breach(r, model, eps, disc, g, a.fresh)
            lo, hi = held["breach_probability_ci"]
            rows.append({
                "setting": name, "seed": seed, "estimate": held["breach_probability"],
                "lo": lo, "hi": hi, "truth": truth, "status": r.leakage["status"],
                "confidence": r.leakage["guarantee"]["confidence"],
                "flagged_share": held["flagged_share"],
            })  # fmt: skip
            mine = [x for x in rows if x["setting"] == name]
            current = summarise(name, mine, a.n, a.estimator, time.perf_counter() - t)
            # written after every seed: a run stopped early keeps the seeds it finished
            partial = [*summary, current]
            out.write_text(json.dumps({"summary": partial, "rows": rows}, indent=1) + "\n")
        summary.append(current)
        print(json.dumps(summary[-1]), flush=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
