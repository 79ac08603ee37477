"""Romanelli, Chatzikokolakis, Palamidessi: the planar Laplace baselines and the exact optimum.

Bayes error (eq. 24-26) of the planar Laplace release (the paper's epsilons, eq. 30 and 32-34) and
of the unobfuscated data, train and test, over 13^2 to 260^2 grid cells and 1, 10, 100 hits per
point (Fig. 6, 7, 9, 11, 12, 14: the Laplace and no-noise tables), on the synthetic 4-user set
(L = 270 m, 173 m; grid over the 6.5 km square) and on Gowalla (L = 1,150 m, 518 m; grid over the
4.5 km square); the exact Bayes-optimal mechanism within each budget by linear programming on
coarse output grids (``with_optimum``: false skips it). The learned obfuscator of the paper is
experiment romanelli2020_obfuscation_*.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets import LocationData, load_gowalla_paris, synthetic_users, uniform_prior
from ..estimators import bayes_error_grid, grid_centres
from ..mechanisms import PlanarLaplace, optimal_bayes_mechanism

__all__ = ["run"]


def table(
    points: np.ndarray,
    users: np.ndarray,
    mech: PlanarLaplace | None,
    half: float,
    cfg: dict[str, Any],
    rng: np.random.Generator,
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for hits in cfg["hits"] if mech is not None else [1]:
        src = np.repeat(points, hits, axis=0)
        lab = np.repeat(users, hits)
        z = mech.release(src, rng) if mech is not None else src
        row = {
            f"{c}x{c}": bayes_error_grid(z, lab, bounds=(-half, half, -half, half), cells=c)
            for c in cfg["grid_cells"]
        }
        row["empirical_distortion_m"] = float(np.linalg.norm(z - src, axis=1).mean())
        out[f"{hits} hits"] = row
    return out


def optimum(
    data: LocationData,
    budget: float,
    outputs: np.ndarray,
    per_user: int | None,
    rng: np.random.Generator,
) -> dict[str, float]:
    idx = np.arange(len(data.train))
    if per_user is not None:
        idx = np.concatenate(
            [
                rng.choice(np.flatnonzero(data.train_sensitive == u), per_user, replace=False)
                for u in np.unique(data.train_sensitive)
            ]
        )
    w, users = data.train[idx], data.train_sensitive[idx]
    prior = uniform_prior(users)
    dist = np.linalg.norm(w[:, None] - outputs[None], axis=-1)
    t0 = time.perf_counter()
    res = optimal_bayes_mechanism(prior, dist, budget)
    return {
        "bayes_error": res.bayes_error,
        "gap": res.gap,
        "distortion_m": res.distortion,
        "n_locations": len(w),
        "n_outputs": len(outputs),
        "seconds": time.perf_counter() - t0,
    }


def run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """Laplace tables and LP optima for both data sets; scatter plots into ``out``."""
    rng = np.random.default_rng(cfg["seed"])
    results: dict[str, Any] = {}
    datasets = {
        "synthetic": synthetic_users(rng=cfg["seed"]),
        "gowalla": load_gowalla_paris(rng=cfg["seed"]),
    }
    import matplotlib.pyplot as plt

    from ..plotting import save

    for name, data in datasets.items():
        c = cfg[name]
        half = c["bounds_m"]
        block: dict[str, object] = {
            "no_noise": {
                "train": table(data.train, data.train_sensitive, None, half, cfg, rng),
                "test": table(data.test, data.test_sensitive, None, half, cfg, rng),
            }
        }
        fig, axes = plt.subplots(1, len(c["cases"]) + 1, figsize=(5 * (len(c["cases"]) + 1), 5))
        axes[0].scatter(*data.test.T, c=data.test_sensitive, s=4, cmap="tab10")
        axes[0].set_title(f"{name}: test data, no noise")
        for ax, case in zip(axes[1:], c["cases"], strict=True):
            eps = math.log(2) / float(case["epsilon"].split("/")[1])
            mech = PlanarLaplace(eps)
            entry: dict[str, object] = {
                "epsilon": eps,
                "expected_distortion_m": mech.expected_distortion,
                "laplace": {
                    "train": table(data.train, data.train_sensitive, mech, half, cfg, rng),
                    "test": table(data.test, data.test_sensitive, mech, half, cfg, rng),
                },
            }
            if not cfg.get("with_optimum", True):
                pass
            elif name == "synthetic":
                o = c["optimum"]
                ticks = np.arange(-o["half_width_m"], o["half_width_m"] + 1e-9, o["cell_m"])
                outputs = np.array([(x, y) for x in ticks for y in ticks])
                entry["optimum"] = optimum(data, case["L"], outputs, o["points_per_user"], rng)
            else:
                entry["optimum"] = {
                    f"{k}x{k}": optimum(
                        data, case["L"], grid_centres((-half, half, -half, half), k), None, rng
                    )
                    for k in c["optimum"]["output_cells"]
                }
            block[f"L={case['L']}"] = entry
            z = mech.release(data.test, rng)
            ax.scatter(*z.T, c=data.test_sensitive, s=4, cmap="tab10")
            ax.set_title(f"planar Laplace, L = {case['L']} m")
        for ax in axes:
            ax.set_aspect("equal")
            ax.set_xlabel("east (m)")
            ax.set_ylabel("north (m)")
        save(fig, out / f"{name}_scatter.png")
        results[name] = block
    return results
