"""Romanelli, Chatzikokolakis, Palamidessi: the MI-trained obfuscator against planar Laplace and
the exact optimum (Fig. 4-14, Table II).

For each budget L: three learned mechanisms (privwatch.adversarial.Obfuscator, trained on the
training users' locations only: Algorithm 1 with the paper's Laplace-seeded generator, Algorithm 1
with the finite-support "anchors" generator, and the anchors generator trained against the exact
Bayes attacker, ``attacker="bayes"``, its step size and anchor grid chosen among
``obfuscator_bayes.candidates`` by its own validation points), the planar Laplace of the
paper's epsilon, and the exact Bayes-optimal mechanism on the 260 x 260 output grid for the
empirical distribution of the *test* locations (optimal_bayes_mechanism, column generation,
certified gap). Bayes errors by eq. 24-26 on
13^2 .. 260^2 grids with 1, 10, 100 hits per point, on train and test, with the empirical
displacement of every mechanism. ``cross_entropy``: the swapping failure of a generator trained on
the cross entropy (Fig. 4). The budgets of a data set run side by side in ``n_jobs`` processes.

"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..adversarial import Obfuscator
from ..datasets import uniform_prior
from ..estimators import grid_centres
from ..mechanisms import PlanarLaplace, optimal_bayes_mechanism
from .fresh import fresh_attacker_cv
from .romanelli2020_learned import KINDS, TITLES, fit_learned, fresh_on, ln2_over, load, table
from .romanelli2020_schedule import run_schedule


def optimum(
    points: np.ndarray, users: np.ndarray, budget: float, half: float, cfg: dict[str, Any]
) -> dict[str, Any]:
    prior = uniform_prior(users)
    outputs = grid_centres((-half, half, -half, half), cfg["cells"])
    dist = np.linalg.norm(points[:, None] - outputs[None], axis=-1)
    t0 = time.perf_counter()
    res = optimal_bayes_mechanism(
        prior, dist, budget, gap_tol=cfg["gap_tol"], max_seconds=cfg.get("max_seconds")
    )
    return {
        "bayes_error": res.bayes_error,
        "dual_bound": res.dual_bound,
        "gap": res.gap,
        "distortion_m": res.distortion,
        "outputs_used": len(res.support),
        "iterations": res.n_iterations,
        "converged": res.converged,
        "seconds": time.perf_counter() - t0,
    }


def run_case(
    name: str, case: dict[str, Any], cfg: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """One budget: the two learned generators, planar Laplace and the optimum; returns the
    results entry and the test-set scatter panels."""
    torch.set_num_threads(1)
    seed = cfg["seed"]
    data = load(name, seed)
    c = cfg[name]
    half = c["bounds_m"]
    L = float(case["L"])
    lap = PlanarLaplace(ln2_over(case["laplace_epsilon"]))
    entry: dict[str, Any] = {}
    learned = {}
    kinds = cfg.get("kinds", KINDS)
    repeat = cfg.get("fresh_attacker_hits", 10)
    for kind in kinds:
        t0 = time.perf_counter()
        ob, params, candidates = fit_learned(kind, L, data, cfg, c, seed)
        fit_s = time.perf_counter() - t0
        learned[kind] = ob
        entry[f"learned_{kind}"] = {
            "params": params,
            "candidates": candidates,
            "train": table(data.train, data.train_sensitive, ob.release, half, cfg, seed),
            "test": table(data.test, data.test_sensitive, ob.release, half, cfg, seed + 1),
            "fit_seconds": fit_s,
            "iterations": ob.n_iter_,
            "best_iteration": ob.best_epoch_ + 1,
            "val_accuracy": ob.val_accuracy_,
            "history": list(ob.history_),
            "fresh_attacker": fresh_on(data, ob.release, repeat=repeat, seed=seed),
        }
    entry["laplace"] = {
        "epsilon": lap.epsilon,
        "expected_distortion_m": lap.expected_distortion,
        "train": table(data.train, data.train_sensitive, lap.release, half, cfg, seed + 2),
        "test": table(data.test, data.test_sensitive, lap.release, half, cfg, seed + 3),
        "fresh_attacker": fresh_on(data, lap.release, repeat=repeat, seed=seed),
    }
    entry["optimum_test"] = optimum(data.test, data.test_sensitive, L, half, cfg["optimum"])
    for kind in learned:
        best = entry[f"learned_{kind}"]["test"]["100 hits"]["260x260"]
        entry[f"learned_{kind}_fraction_of_optimum"] = best / entry["optimum_test"]["bayes_error"]
    rng = np.random.default_rng(seed + 9)
    panels = [
        ("planar Laplace", lap.release(data.test, rng)),
        ("no noise", data.test),
        *((TITLES[kind], learned[kind].release(data.test, rng)) for kind in kinds),
    ]
    return entry, panels


def draw_row(
    row: Any,
    panels: list[tuple[str, Any]],
    true: np.ndarray,
    users: np.ndarray,
    what: str,
    L: float,
) -> None:
    """One row of scatter plots, coloured by user. Every panel but the planar Laplace shares
    the extent of the true locations plus L; a release on few points is drawn as one dot per output
    and user, sized by its count, and the number of distinct outputs is given."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    lo, hi = true.min(axis=0) - L, true.max(axis=0) + L
    for ax, (title, pts) in zip(row, panels, strict=True):
        pts = np.asarray(pts)
        distinct = np.unique(pts, axis=0)
        if len(distinct) <= len(pts) / 4:  # few outputs: one dot per output and user, by mass
            for u in np.unique(users):
                d_u, c_u = np.unique(pts[users == u], axis=0, return_counts=True)
                colour = cmap((u - users.min()) / max(1, users.max() - users.min()))
                ax.scatter(*d_u.T, s=6 + 2 * c_u, alpha=0.5, color=colour)
            title = f"{title} ({len(distinct)} outputs)"
        else:
            ax.scatter(*pts.T, c=users, s=4, cmap="tab10")
        if not title.startswith("planar Laplace"):
            ax.set_xlim(lo[0], hi[0])
            ax.set_ylim(lo[1], hi[1])
        ax.set_title(f"{what}, {title}, L = {L:.0f} m", fontsize=8)
        ax.set_aspect("equal")
        ax.set_xlabel("east (m)")
        ax.set_ylabel("north (m)")


def run_dataset(name: str, cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """Every budget of one data set; scatter plots into ``out``."""
    import matplotlib.pyplot as plt
    from joblib import Parallel, delayed

    from ..plotting import save

    seed = cfg["seed"]
    data = load(name, seed)
    c = cfg[name]
    half = c["bounds_m"]
    results: dict[str, Any] = {"dataset": name}
    results["no_noise"] = {
        "test": table(
            data.test, data.test_sensitive, lambda p, r: p, half, {**cfg, "hits": [1]}, seed
        )
    }
    t0 = time.perf_counter()
    # the budgets run side by side, one process each
    runs = Parallel(n_jobs=min(cfg["n_jobs"], len(c["cases"])))(
        delayed(run_case)(name, case, cfg) for case in c["cases"]
    )
    results["wall_seconds"] = time.perf_counter() - t0
    n_panels = 2 + len(cfg.get("kinds", KINDS))
    fig, axes = plt.subplots(len(c["cases"]), n_panels, figsize=(5 * n_panels, 5 * len(c["cases"])))
    for row, case, (entry, panels) in zip(np.atleast_2d(axes), c["cases"], runs, strict=True):
        L = float(case["L"])
        results[f"L={case['L']}"] = entry
        results[f"L={case['L']}"]["scatter_test"] = {t: p.tolist() for t, p in panels}
        results[f"L={case['L']}"]["fresh_attacker_cv"] = {
            t: fresh_attacker_cv(p, data.test_sensitive, seed=seed) for t, p in panels
        }
        draw_row(row, panels, data.test, data.test_sensitive, f"{name} test", L)
    save(fig, out / f"{name}_scatter.png")
    return results


def run_cross_entropy(cfg: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """Fig. 4: the generator trained on the cross entropy keeps swapping users."""
    import matplotlib.pyplot as plt

    from ..plotting import save

    torch.set_num_threads(1)
    ce = cfg["cross_entropy"]
    seed = cfg["seed"]
    data = load(ce["dataset"], seed)
    shots: dict[int, np.ndarray] = {}

    def snap(rec: Any, est: Obfuscator) -> None:
        if rec["epoch"] + 1 in ce["snapshots"]:
            shots[rec["epoch"] + 1] = est.release(data.test, rng=seed)

    params = {
        **cfg["obfuscator"],
        **cfg[ce["dataset"]]["obfuscator"],
        "max_iter": ce["iterations"],
        "patience": ce["iterations"],
    }
    runs: dict[str, Any] = {}
    for loss in ("cross_entropy", "mutual_information"):
        shots = {}
        ob = Obfuscator(
            float(ce["L"]),
            loss=loss,
            rng=seed,
            callbacks=[snap],
            **params,
        ).fit(data.train, data.train_sensitive)
        runs[loss] = {
            "val_accuracy": ob.history_.column("val_accuracy"),
            "val_distortion_m": ob.history_.column("val_distortion"),
            "snapshots": shots,
        }
    fig, axes = plt.subplots(2, len(ce["snapshots"]), figsize=(4 * len(ce["snapshots"]), 8.5))
    for row, loss in zip(axes, runs, strict=True):
        for ax, it in zip(row, ce["snapshots"], strict=True):
            pts = runs[loss]["snapshots"][it]
            ax.scatter(*pts.T, c=data.test_sensitive, s=3, cmap="tab10")
            acc = runs[loss]["val_accuracy"][it - 1]
            ax.set_title(f"{loss}: G_{it - 1} (C_{it} acc {acc:.2f})", fontsize=9)
            ax.set_aspect("equal")
            ax.set_xlim(-900, 900)
            ax.set_ylim(-900, 900)
    save(fig, out_dir / "cross_entropy_failure.png")
    fig, ax = plt.subplots(figsize=(6, 4))
    for loss, run in runs.items():
        ax.plot(range(1, len(run["val_accuracy"]) + 1), run["val_accuracy"], label=loss)
    ax.axhline(0.25, color="grey", ls=":", label="random guess")
    ax.set_xlabel("iteration i")
    ax.set_ylabel("held-out accuracy of C_i")
    ax.legend()
    save(fig, out_dir / "cross_entropy_accuracy.png")
    out = {loss: {k: v for k, v in run.items() if k != "snapshots"} for loss, run in runs.items()}
    return {"runs": out}


def run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run one part (``synthetic``, ``gowalla``, ``cross_entropy`` or ``schedule``) into ``out``."""
    which = cfg["part"]
    if which == "schedule":  # Table II's protocol, the paper's G0 and classifier schedule
        return run_schedule(cfg, out)
    if which == "cross_entropy":
        return run_cross_entropy(cfg, out)
    return run_dataset(which, cfg, out)
