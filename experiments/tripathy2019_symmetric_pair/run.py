"""Tripathy, Wang, Ishwar Fig. 3: PPAN on the symmetric pair (m = 10, p = 0.4, 1,000 training
samples), full data W = (X, Y) and useful data only W = Y, against the conventional approach
(the exact optimum of problem (1) on the estimated pmf) and the theoretical optimum (eq. 30-31).

For every delta a fresh training set is drawn (as in the paper); both learned channels are
evaluated exactly on the true pmf, and compared with the optimum at the distortion they
actually achieve.

Settings (``config.json``): ``ppan`` shared, ``observations.<useful|full>`` per model. Full
data uses the paper's own schedule (2,500 epochs, Adam step 1e-3, one adversary step per
mechanism step) and a ``FactoredMechanism`` over W = (X, Y) (``observed_shape``), so that
(x, y) cells rare or absent among the 1,000 samples borrow what cells sharing x or y learned.

Run: python experiments/tripathy2019_symmetric_pair/run.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch

from privwatch import theory
from privwatch.adversarial import PPAN, fit_many
from privwatch.datasets import SymmetricPair, symmetric_pair
from privwatch.mechanisms import optimal_privacy_mechanism
from privwatch.plotting import save

HERE = Path(__file__).parent


def judge(data: SymmetricPair, channel: np.ndarray) -> dict[str, float]:
    """Leakage and distortion of ``channel`` on the true pmf, and its excess over the optimum at
    the distortion it achieves."""
    mi, dist = data.evaluate(channel)
    return {"mi": mi, "distortion": dist, "excess_over_optimum": mi - data.optimum(dist)}


def main() -> None:
    import matplotlib.pyplot as plt

    torch.set_num_threads(1)
    cfg = json.loads((HERE / "config.json").read_text())
    m, p = cfg["m"], cfg["p"]
    deltas = np.linspace(cfg["deltas"]["start"], cfg["deltas"]["stop"], cfg["deltas"]["num"])
    rng = np.random.default_rng(cfg["seed"])
    hamming = 1 - np.eye(m)
    results: dict[str, object] = {"config": cfg}
    fig, ax = plt.subplots(figsize=(7, 5))
    grid = np.linspace(0, 1, 201)
    for obs, style, colour in (("full", "-", "C0"), ("useful", "--", "C1")):
        sets, models = [], []
        for delta in deltas:  # a fresh training set per delta, as in the paper
            data = symmetric_pair(cfg["n_train"], m=m, p=p, observation=obs, rng=rng)
            sets.append(data)
            models.append(
                PPAN.finite(
                    hamming,
                    n_observed=data.pmf.shape[1],
                    n_sensitive=m,
                    budget=float(delta),
                    rng=int(rng.integers(2**31)),
                    **{**cfg["ppan"], **cfg["observations"][obs]},
                )
            )
        t0 = time.perf_counter()
        fitted = fit_many(
            models, [(d.observed, d.sensitive, d.useful) for d in sets], n_jobs=cfg["n_jobs"]
        )
        t_ppan = time.perf_counter() - t0
        rows = []
        for delta, data, ppan in zip(deltas, sets, fitted, strict=True):
            conv = optimal_privacy_mechanism(data.empirical_pmf(), hamming, float(delta))
            rows.append(
                {
                    "delta": float(delta),
                    "optimum_at_delta": data.optimum(float(delta)),
                    "ppan": judge(data, ppan.channel()),
                    "conventional": judge(data, conv.channel()),
                }
            )
        worst = max(r["ppan"]["excess_over_optimum"] for r in rows)
        results[obs] = {"points": rows, "ppan_seconds": t_ppan, "ppan_worst_excess": worst}
        print(
            f"{obs}: PPAN worst excess over the optimum {worst:.4f} nats; "
            f"20-point curve {t_ppan:.1f} s ({cfg['n_jobs']} processes)",
            flush=True,
        )
        ax.plot(
            grid,
            [theory.symmetric_pair_optimum(d, m=m, p=p, observation=obs) for d in grid],
            style,
            color=colour,
            label=f"optimum, {obs} data",
        )
        ax.plot(
            [r["ppan"]["distortion"] for r in rows],
            [r["ppan"]["mi"] for r in rows],
            "o",
            color=colour,
            label=f"PPAN, {obs} data",
        )
        ax.plot(
            [r["conventional"]["distortion"] for r in rows],
            [r["conventional"]["mi"] for r in rows],
            "x",
            color=colour,
            label=f"conventional (estimated pmf), {obs} data",
        )
    ax.set_xlabel("distortion Pr[Y != Z] (true pmf)")
    ax.set_ylabel("I(X; Z) (nats, true pmf)")
    ax.set_title("symmetric pair m = 10, p = 0.4, 1,000 training samples")
    ax.legend(fontsize=8)
    save(fig, HERE / "tradeoff.png")
    (HERE / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
