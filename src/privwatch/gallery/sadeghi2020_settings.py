"""Which settings make Sadeghi et al.'s Fig. 1-2 claims true? A sweep over the lost settings.

The paper's |S|, |X|, pmf generator and epsilons were lost in the text extraction; its text makes
three checkable claims: (a) Fig. 1, the gamma bound of Hsu et al. "tends to infinity almost all
the time"; (b) Fig. 2, the strict watchdog's NMIL is "0.7 or more almost all the time"; (c) the
green curve (delta = 0.01, eps_max = 3 eps: 1.5 at eps = 0.5) has NMIL <= 0.5 in 97 % of cases.
For every combination of |S|, |X|, Dirichlet concentration and epsilon the three fractions are
measured on the same random pmfs; the setting closest to all three claims is then drawn as
Fig. 1-2 (``best/``) with the full Monte Carlo of experiment sadeghi2020_watchdog_mc.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import watchdog as wd
from ..datasets import random_joint
from . import sadeghi2020_watchdog_mc

__all__ = ["run", "sweep", "sweep_point"]


def sweep_point(
    n_sensitive: int,
    n_observed: int,
    concentration: float,
    epsilons: list[float],
    n: int,
    seed: int,
) -> list[dict[str, float]]:
    """The three claimed fractions at every epsilon, on ``n`` pmfs of one shape and generator."""
    rng = np.random.default_rng(seed)
    pmfs = [
        random_joint(n_sensitive, n_observed, concentration=concentration, rng=rng)
        for _ in range(n)
    ]
    rows = []
    for eps in epsilons:
        gamma_inf = [math.isinf(wd.gamma_bound(p, eps)) for p in pmfs]
        strict = np.array([wd.watchdog_utility(p, eps).nmil for p in pmfs])
        relaxed = np.array([wd.relaxed_watchdog(p, eps, 0.01, 3 * eps).nmil for p in pmfs])
        rows.append(
            {
                "n_sensitive": n_sensitive,
                "n_observed": n_observed,
                "concentration": concentration,
                "epsilon": eps,
                "a_fraction_gamma_infinite": float(np.mean(gamma_inf)),
                "b_fraction_strict_nmil_ge_0.7": float(np.mean(strict >= 0.7)),
                "c_fraction_relaxed_nmil_le_0.5": float(np.mean(relaxed <= 0.5)),
            }
        )
    return rows


def _fig2_shortfall(row: dict[str, float]) -> float:
    """Shortfall of one epsilon from claims (b) ~ 1 and (c) = 0.97 (Fig. 2: one global epsilon)."""
    return max(
        1 - row["b_fraction_strict_nmil_ge_0.7"], abs(0.97 - row["c_fraction_relaxed_nmil_le_0.5"])
    )


def _best_per_shape(rows: list[dict[str, float]]) -> list[dict[str, Any]]:
    """Per (|S|, |X|, concentration): Fig. 1's best epsilon for (a), Fig. 2's for (b)+(c)."""
    shapes: dict[tuple[float, ...], list[dict[str, float]]] = {}
    for r in rows:
        shapes.setdefault((r["n_sensitive"], r["n_observed"], r["concentration"]), []).append(r)
    out = []
    for (n_s, n_x, conc), rs in shapes.items():
        fig1 = max(rs, key=lambda r: r["a_fraction_gamma_infinite"])
        fig2 = min(rs, key=_fig2_shortfall)
        out.append(
            {
                "n_sensitive": n_s,
                "n_observed": n_x,
                "concentration": conc,
                "fig1_epsilon": fig1["epsilon"],
                "a_fraction_gamma_infinite": fig1["a_fraction_gamma_infinite"],
                "fig2_epsilon": fig2["epsilon"],
                "b_fraction_strict_nmil_ge_0.7": fig2["b_fraction_strict_nmil_ge_0.7"],
                "c_fraction_relaxed_nmil_le_0.5": fig2["c_fraction_relaxed_nmil_le_0.5"],
                "largest_shortfall": max(
                    1 - fig1["a_fraction_gamma_infinite"], _fig2_shortfall(fig2)
                ),
            }
        )
    return out


def sweep(settings: dict[str, Any]) -> list[dict[str, float]]:
    """:func:`sweep_point` over every (|S|, |X|, concentration) of ``settings``, in grid order;
    each cell draws its pmfs from ``settings["seed"]``, so a cell can be recomputed alone."""
    rows: list[dict[str, float]] = []
    grid = itertools.product(
        settings["n_sensitive"], settings["n_observed"], settings["concentration"]
    )
    for n_s, n_x, conc in grid:
        rows += sweep_point(
            n_s, n_x, conc, settings["epsilons"], settings["n_pmfs"], settings["seed"]
        )
    return rows


def run(settings: dict[str, Any], out: Path) -> dict[str, Any]:
    """Sweep, pick the best-matching setting, draw its Fig. 1-2 into ``out/best``."""
    rows = sweep(settings)
    shapes = _best_per_shape(rows)
    best = min(shapes, key=lambda r: r["largest_shortfall"])
    claims = (
        "a_fraction_gamma_infinite",
        "b_fraction_strict_nmil_ge_0.7",
        "c_fraction_relaxed_nmil_le_0.5",
    )
    per_claim = {c: max(rows, key=lambda r: r[c]) for c in claims}
    eps = best["fig2_epsilon"]
    best_settings = {
        **settings["figures"],
        "n_sensitive": int(best["n_sensitive"]),
        "n_observed": int(best["n_observed"]),
        "dirichlet_concentration": best["concentration"],
        "fig1_epsilon": best["fig1_epsilon"],
        "strict_epsilons": [eps, 2 * eps],
        "relaxed": [
            {
                "label": f"eps={eps:g}, delta=0.005, eps_max={2 * eps:g}",
                "epsilon": eps,
                "delta": 0.005,
                "epsilon_max": 2 * eps,
            },
            {
                "label": f"eps={eps:g}, delta=0.005, eps_max=inf",
                "epsilon": eps,
                "delta": 0.005,
                "epsilon_max": None,
            },
            {
                "label": f"eps={eps:g}, delta=0.01, eps_max={3 * eps:g}",
                "epsilon": eps,
                "delta": 0.01,
                "epsilon_max": 3 * eps,
            },
        ],
    }
    (out / "best").mkdir(exist_ok=True)
    figures = sadeghi2020_watchdog_mc.run(best_settings, out / "best")
    return {
        "sweep": rows,
        "best": best,
        "best_per_claim": per_claim,
        "per_shape": shapes,
        "best_settings": best_settings,
        "best_figures": figures,
    }
