"""Tripathy, Wang, Ishwar Fig. 4-6: PPAN on Gaussian data against the closed-form optima.

* ``scalar``: (X, Y) unit-variance Gaussian pair, rho = 0.85, useful data only (W = Y, Prop. 1)
  and full data (W = (X, Y), Prop. 3) — Fig. 5;
* ``vector``: 5-dim pairs with rho = [0.47, 0.24, 0.85, 0.07, 0.66], useful data only (Prop. 2) —
  Fig. 6;
* ``rate_distortion``: X = Y = W ~ N(0, diag(0.47, 0.24, 0.85, 0.07, 0.66)): I(X; Z) is the
  rate-distortion function (reverse waterfilling) — Fig. 4.

A seed-noise mechanism z = f(w, u) against a diagonal-Gaussian adversary (scalar case: 5-unit
layers as in the paper but ELU instead of ReLU — with ReLU, dead units cut the seed noise or the
adversary off on some initialisations and the run stalls at Z ~ Y), squared-error
distortion with the budget penalty lambda * max(0, E||Y - Z||^2 - delta)^2, 8,000 training and
4,000 test samples (a fresh draw per delta). Privacy on test data is the Gaussian-approximation
I(X; Z) (§III-B1, exact for jointly Gaussian releases, otherwise a lower estimate); the
adversary's variational estimate h(X) + E log Q(X | Z) (h(X) known here) is reported beside it.
Each point is compared with the optimum at the distortion it achieves on test data.

the config: shared PPAN settings under ``ppan``, per-case overrides under ``<case>.ppan``
(the vector case uses the paper's 250 epochs; rate-distortion the paper's lambda = 500 and 8
seed-noise inputs, with 1,000 epochs and the cosine step-size schedule) and per-curve ones under
``<case>.curves.<curve>`` (``deltas``, ``ppan``: the paper's Fig. 5 sweeps the full-data curve
over its own budgets with its own lambda);
``<case>.mechanism = "gaussian"`` swaps in the reparameterised Gaussian mechanism; the 20 points
of a curve are fitted in ``n_jobs`` processes (fit_many). ``tripathy2019_gaussian_paper`` (Fig. 5)
and ``tripathy2019_gaussian_vector_paper`` (Fig. 6) run the same code with the paper's own
settings (per-sample penalty of eq. 8, lambda 10, 250 epochs, Adam 1e-3, ReLU).

"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import theory
from ..adversarial import (
    PPAN,
    GaussianAdversary,
    GaussianMechanism,
    SeedNoiseMechanism,
    fit_many,
    gaussian_mi,
    squared_error,
)
from ..datasets import gaussian_pair


def build(data: tuple[np.ndarray, ...], delta: float, case: dict[str, Any], seed: int) -> PPAN:
    """The PPAN of one point: seed-noise mechanism and Gaussian adversary, seeded weights."""
    w, x, y = data
    torch.manual_seed(seed)  # reproducible initial weights
    act = case.get("activation", "relu")
    mech = (
        GaussianMechanism(w.shape[1], y.shape[1], hidden=case["hidden"])
        if case.get("mechanism") == "gaussian"
        else SeedNoiseMechanism(
            w.shape[1],
            y.shape[1],
            hidden=case["hidden"],
            noise_dim=case["noise_dim"],
            activation=act,
        )
    )
    adv = GaussianAdversary(y.shape[1], x.shape[1], hidden=case["hidden"], activation=act)
    return PPAN(mech, adv, squared_error, budget=delta, rng=seed, **case["ppan"])


def judge(ppan: PPAN, test: tuple[np.ndarray, ...], h_x: float, seed: int) -> dict[str, float]:
    """Distortion, Gaussian-approximation MI and the adversary's estimate on test data."""
    wt, xt, yt = test
    z = ppan.release(wt, rng=seed + 1)
    return {
        "delta": float(ppan.budget),
        "distortion": float(((yt - z) ** 2).sum(axis=1).mean()),
        "gaussian_mi": gaussian_mi(xt, z),
        "adversary_bound": h_x + ppan.evaluate(wt, xt, yt)["log_likelihood"],
    }


def _case(cfg: dict[str, Any], curve: str | None = None) -> dict[str, Any]:
    """The settings of ``cfg["part"]`` with the shared PPAN settings merged under its own, and
    ``curve``'s own (``<case>.curves.<curve>``) merged over both."""
    which = cfg["part"]
    own = cfg[which].get("curves", {}).get(curve, {}) if curve else {}
    ppan = {**cfg["ppan"], **cfg[which].get("ppan", {}), **own.get("ppan", {})}
    return {**cfg[which], **own, "ppan": ppan}


def curves(cfg: dict[str, Any]) -> dict[str, Callable[[float], float]]:
    """Curve name -> its optimum I(X; Z) at a distortion (Props. 1-3, or R(D))."""
    which, case = cfg["part"], _case(cfg)
    if which == "rate_distortion":
        var = list(case["variances"])
        return {"W = X = Y": lambda d: theory.gaussian_rate_distortion(d, var)}
    if which == "vector":
        return {"useful": lambda d: theory.gaussian_vector_useful_data(d, rho=case["rho"])}
    return {
        "useful": lambda d: theory.gaussian_useful_data(d, rho=case["rho"]),
        "full": lambda d: theory.gaussian_full_data(d, rho=case["rho"]),
    }


def _deltas(case: dict[str, Any]) -> Any:
    return np.linspace(case["deltas"]["start"], case["deltas"]["stop"], case["deltas"]["num"])


def _draw(cfg: dict[str, Any], curve: str, s: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The (observed, sensitive, useful) training and test sets of the point seeded ``s``."""
    case = _case(cfg)
    if cfg["part"] == "rate_distortion":
        var = np.asarray(case["variances"])
        draw = [
            np.sqrt(var) * np.random.default_rng(s + i).standard_normal((n, 5))
            for i, n in enumerate((cfg["n_train"], cfg["n_test"]))
        ]
        (x, y), (xt, yt) = (draw[0], draw[0]), (draw[1], draw[1])
    else:
        x, y = gaussian_pair(cfg["n_train"], rho=case["rho"], rng=s)
        xt, yt = gaussian_pair(cfg["n_test"], rho=case["rho"], rng=s + 1)
    w, wt = (np.hstack([x, y]), np.hstack([xt, yt])) if curve == "full" else (y, yt)
    return (w, x, y), (wt, xt, yt)


def _h_x(cfg: dict[str, Any]) -> float:
    """Differential entropy of the sensitive X (unit-variance pairs, or the given variances)."""
    case = _case(cfg)
    if cfg["part"] == "rate_distortion":
        var = np.asarray(case["variances"])
        return 0.5 * len(var) * math.log(2 * math.pi * math.e) + 0.5 * float(np.log(var).sum())
    dim = len(case["rho"]) if cfg["part"] == "vector" else 1
    return 0.5 * dim * math.log(2 * math.pi * math.e)


def _row(cfg: dict[str, Any], curve: str, ppan: PPAN, test: Any, s: int) -> dict[str, float]:
    row = judge(ppan, test, _h_x(cfg), s)
    row["optimum_at_distortion"] = curves(cfg)[curve](row["distortion"])
    row["excess_over_optimum"] = row["gaussian_mi"] - row["optimum_at_distortion"]
    return row


def _seeds(cfg: dict[str, Any]) -> dict[str, list[int]]:
    """Curve -> the data/weight seed of each of its points: one draw per point, curve after
    curve, from ``seed`` (a fresh data set per delta, as in the paper)."""
    rng = np.random.default_rng(cfg["seed"])
    n = {c: len(_deltas(_case(cfg, c))) for c in curves(cfg)}
    return {c: [int(rng.integers(2**31)) for _ in range(n[c])] for c in curves(cfg)}


def refit_point(cfg: dict[str, Any], curve: str, index: int) -> dict[str, float]:
    """Fit and judge point ``index`` of ``curve`` alone, exactly as :func:`run` fits it within
    the whole curve (same data, seed and initial weights): a committed record can be checked
    one point at a time."""
    with torch.random.fork_rng():
        torch.set_num_threads(1)
        s = _seeds(cfg)[curve][index]
        data, test = _draw(cfg, curve, s)
        case = _case(cfg, curve)
        ppan = build(data, float(_deltas(case)[index]), case, s).fit(*data)
        return _row(cfg, curve, ppan, test, s)


def run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run the experiment, draw its figures into ``out``, return the numbers; the caller's
    torch random state is restored afterwards (the networks are seeded through it)."""
    with torch.random.fork_rng():
        return _run(cfg, out)


def _run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from ..plotting import save

    torch.set_num_threads(1)
    which = cfg["part"]
    fig, ax = plt.subplots(figsize=(7, 5))
    results: dict[str, Any] = {"case": which}
    seeds = _seeds(cfg)
    for k, (name, optimum) in enumerate(curves(cfg).items()):
        case = _case(cfg, name)
        deltas = _deltas(case)
        sets, tests, ppans = [], [], []
        for delta, s in zip(deltas, seeds[name], strict=True):
            data, test = _draw(cfg, name, s)
            sets.append(data)
            tests.append(test)
            ppans.append(build(data, float(delta), case, s))
        t0 = time.perf_counter()
        ppans = fit_many(ppans, sets, n_jobs=cfg["n_jobs"])
        total = time.perf_counter() - t0
        rows = [_row(cfg, name, p, t, s) for p, t, s in zip(ppans, tests, seeds[name], strict=True)]
        worst = max(abs(r["excess_over_optimum"]) for r in rows)
        over = max(r["distortion"] - r["delta"] for r in rows)  # > 0: a budget was exceeded
        results[name] = {
            "points": rows,
            "worst_abs_gap": worst,
            "worst_budget_excess": over,
            "curve_seconds": total,
        }
        grid = np.linspace(1e-3, max(deltas.max(), max(r["distortion"] for r in rows)), 200)
        ax.plot(grid, [optimum(d) for d in grid], color=f"C{k}", label=f"optimum ({name})")
        ax.plot(
            [r["distortion"] for r in rows],
            [r["gaussian_mi"] for r in rows],
            "o",
            color=f"C{k}",
            label=f"PPAN, Gaussian-approx. MI ({name})",
        )
        ax.plot(
            [r["distortion"] for r in rows],
            [r["adversary_bound"] for r in rows],
            "x",
            color=f"C{k}",
            alpha=0.6,
            label=f"PPAN, adversary estimate ({name})",
        )
    ax.set_xlabel("distortion E||Y - Z||^2 (test)")
    ax.set_ylabel("I(X; Z) (nats, test)")
    ax.set_title(f"PPAN, Gaussian data: {which}")
    ax.legend(fontsize=8)
    save(fig, out / f"{which}.png")
    return results
