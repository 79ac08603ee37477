"""PPAN speed and accuracy (issue 5): the 20-point discrete curves and the scalar Gaussian curves.

Discrete: symmetric pair m = 10, p = 0.4, 1,000 training samples per point, 20 budgets in
[0, 0.9], useful-data (W = Y) and full-data (W = (X, Y)) models; each learned channel evaluated on
the true pmf against eq. (30)/(31) at its achieved distortion. Baseline in the same run: the
conventional approach (exact convex optimum on the estimated pmf), timed on the same points.
Gaussian: rho = 0.85, 20 budgets, 8,000 / 4,000 samples, useful and full data, against Props. 1
and 3 (Gaussian-approximation MI on test data). Settings: the experiments' config files,
including ``n_jobs`` (the points of a curve are fitted in that many processes; the PPAN seconds
include starting them).

Run: python benchmarks/bench_ppan.py [discrete|gaussian]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch
from _timing import write

from privwatch import gallery, theory
from privwatch.adversarial import (
    PPAN,
    GaussianAdversary,
    SeedNoiseMechanism,
    fit_many,
    gaussian_mi,
    squared_error,
)
from privwatch.datasets import gaussian_pair, symmetric_pair
from privwatch.mechanisms import optimal_privacy_mechanism


def discrete() -> dict[str, object]:
    cfg = gallery.config("tripathy2019_symmetric_pair")["settings"]
    m, p = cfg["m"], cfg["p"]
    deltas = np.linspace(cfg["deltas"]["start"], cfg["deltas"]["stop"], cfg["deltas"]["num"])
    out: dict[str, object] = {}
    for obs in ("useful", "full"):
        rng = np.random.default_rng(cfg["seed"])
        sets = [symmetric_pair(cfg["n_train"], m=m, p=p, observation=obs, rng=rng) for _ in deltas]
        models = [
            PPAN.finite(
                1 - np.eye(m),
                n_observed=data.pmf.shape[1],
                n_sensitive=m,
                budget=float(delta),
                rng=0,
                **{**cfg["ppan"], **cfg["observations"][obs]},
            )
            for delta, data in zip(deltas, sets, strict=True)
        ]
        t0 = time.perf_counter()
        fitted = fit_many(
            models, [(d.observed, d.sensitive, d.useful) for d in sets], n_jobs=cfg["n_jobs"]
        )
        t_ppan = time.perf_counter() - t0
        excess = []
        for data, ppan in zip(sets, fitted, strict=True):
            mi, dist = data.evaluate(ppan.channel())
            excess.append(mi - data.optimum(dist))
        t0 = time.perf_counter()
        for delta, data in zip(deltas, sets, strict=True):
            optimal_privacy_mechanism(data.empirical_pmf(), 1 - np.eye(m), float(delta))
        t_conv = time.perf_counter() - t0
        out[obs] = {
            "ppan_seconds": t_ppan,
            "n_jobs": cfg["n_jobs"],
            "conventional_seconds": t_conv,
            "ratio_ppan_to_conventional": t_ppan / t_conv,
            "worst_excess_nats": max(excess),
            "excess_nats": excess,
        }
        print(obs, out[obs], flush=True)
    return out


def gaussian() -> dict[str, object]:
    cfg = gallery.config("tripathy2019_gaussian_scalar")["settings"]
    case = cfg["scalar"]
    deltas = np.linspace(case["deltas"]["start"], case["deltas"]["stop"], case["deltas"]["num"])
    out: dict[str, object] = {}
    for obs in ("useful", "full"):
        sets, tests, models = [], [], []
        for k, delta in enumerate(deltas):
            x, y = gaussian_pair(cfg["n_train"], rho=case["rho"], rng=k)
            xt, yt = gaussian_pair(cfg["n_test"], rho=case["rho"], rng=1000 + k)
            w, wt = (np.hstack([x, y]), np.hstack([xt, yt])) if obs == "full" else (y, yt)
            torch.manual_seed(k)
            models.append(
                PPAN(
                    SeedNoiseMechanism(
                        w.shape[1],
                        1,
                        hidden=case["hidden"],
                        noise_dim=case["noise_dim"],
                        activation=case.get("activation", "relu"),
                    ),
                    GaussianAdversary(
                        1, 1, hidden=case["hidden"], activation=case.get("activation", "relu")
                    ),
                    squared_error,
                    budget=float(delta),
                    rng=k,
                    **cfg["ppan"],
                )
            )
            sets.append((w, x, y))
            tests.append((wt, xt, yt))
        t0 = time.perf_counter()
        fitted = fit_many(models, sets, n_jobs=cfg["n_jobs"])
        seconds = time.perf_counter() - t0
        gaps = []
        for k, (ppan, (wt, xt, yt)) in enumerate(zip(fitted, tests, strict=True)):
            z = ppan.release(wt, rng=k)
            d = float(((yt - z) ** 2).mean())
            opt = (
                theory.gaussian_useful_data(d, rho=case["rho"])
                if obs == "useful"
                else theory.gaussian_full_data(d, rho=case["rho"])
            )
            gaps.append(gaussian_mi(xt, z) - opt)
        out[obs] = {
            "curve_seconds": seconds,
            "n_jobs": cfg["n_jobs"],
            "worst_abs_gap_nats": max(abs(g) for g in gaps),
            "gaps_nats": gaps,
        }
        print(obs, out[obs], flush=True)
    return out


def main() -> None:
    torch.set_num_threads(1)
    which = sys.argv[1] if len(sys.argv) > 1 else "discrete"
    payload = discrete() if which == "discrete" else gaussian()
    print("written", write(f"ppan_{which}", {which: payload}))


if __name__ == "__main__":
    main()
