"""Sadeghi, Ding, Rakotoarivelo, Fig. 1 and Fig. 2 over random joint pmfs.

Each pmf ``p[s, x]`` is a Dirichlet draw over the ``|S| x |X|`` cells. Fig. 1: CDFs, at
``fig1_epsilon``, of the original max |log-lift| over the flagged set, Hsu et al.'s gamma bound
(Prop. 2; capped for the plot, the fraction that is infinite is reported) and the optimal level
of an X^c-invariant randomization (Cor. 1). Fig. 2: CDFs of NMIL (eq. 9) for the strict watchdog
at two epsilons and for the greedy (epsilon, delta) relaxation (Algorithm 1).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from .. import watchdog as wd
from ..datasets import random_joint

__all__ = ["monte_carlo", "run"]


def monte_carlo(settings: dict[str, Any]) -> dict[str, Any]:
    """The per-pmf values of Fig. 1 and Fig. 2 (lists) for ``settings``."""
    rng = np.random.default_rng(settings["seed"])
    eps1 = settings["fig1_epsilon"]
    fig1: dict[str, list[float]] = {"original": [], "gamma": [], "optimal": []}
    nmil: dict[str, list[float]] = {f"strict eps={e:g}": [] for e in settings["strict_epsilons"]}
    nmil.update({r["label"]: [] for r in settings["relaxed"]})
    checks: dict[str, dict[str, list[float]]] = {
        r["label"]: {"satisfied": [], "breach": [], "level": []} for r in settings["relaxed"]
    }
    for _ in range(settings["n_pmfs"]):
        p = random_joint(
            settings["n_sensitive"],
            settings["n_observed"],
            concentration=settings["dirichlet_concentration"],
            rng=rng,
        )
        keep = wd.partition(p, eps1)
        if (~keep).any():
            fig1["original"].append(float(wd.symbol_risk(p)[~keep].max()))
            fig1["gamma"].append(wd.gamma_bound(p, eps1))
            fig1["optimal"].append(wd.optimal_epsilon(p, eps1).randomized_epsilon)
        for e in settings["strict_epsilons"]:
            nmil[f"strict eps={e:g}"].append(wd.watchdog_utility(p, e).nmil)
        for r in settings["relaxed"]:
            eps_max = math.inf if r["epsilon_max"] is None else r["epsilon_max"]
            res = wd.relaxed_watchdog(p, r["epsilon"], r["delta"], eps_max)
            nmil[r["label"]].append(res.nmil)
            c = checks[r["label"]]
            c["satisfied"].append(float(res.satisfied))
            c["breach"].append(res.breach_probability)
            c["level"].append(res.effective_epsilon)
    return {"fig1": fig1, "nmil": nmil, "checks": checks}


def summarise(raw: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """Fractions and quantiles of the per-pmf values (the numbers the paper's text quotes)."""
    fig1, nmil, checks = raw["fig1"], raw["nmil"], raw["checks"]
    gamma = np.asarray(fig1["gamma"])
    eps1 = settings["fig1_epsilon"]
    n_flag = len(fig1["original"])
    return {
        "fig1": {
            "n_pmfs_with_flagged_symbols": n_flag,
            "median_original": float(np.median(fig1["original"])) if n_flag else math.nan,
            "median_optimal": float(np.median(fig1["optimal"])) if n_flag else math.nan,
            "fraction_gamma_infinite": float(np.mean(np.isinf(gamma))) if n_flag else math.nan,
            "median_gamma": float(np.median(gamma)) if n_flag else math.nan,
            "fraction_optimal_below_epsilon": (
                float(np.mean(np.asarray(fig1["optimal"]) <= eps1)) if n_flag else math.nan
            ),
        },
        "fig2": {
            label: {
                "median_nmil": float(np.median(v)),
                "p10_nmil": float(np.quantile(v, 0.1)),
                "p90_nmil": float(np.quantile(v, 0.9)),
                "fraction_nmil_ge_0.7": float(np.mean(np.asarray(v) >= 0.7)),
                "fraction_nmil_le_0.5": float(np.mean(np.asarray(v) <= 0.5)),
            }
            for label, v in nmil.items()
        },
        "relaxed_checks": {
            label: {
                "fraction_satisfied": float(np.mean(c["satisfied"])),
                "max_breach_probability": float(np.max(c["breach"])),
                "max_breach_probability_when_satisfied": float(
                    np.max(np.asarray(c["breach"])[np.asarray(c["satisfied"]) > 0])
                ),
                "max_abs_log_lift_p99": float(np.quantile(c["level"], 0.99)),
            }
            for label, c in checks.items()
        },
    }


def run(settings: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run the Monte Carlo, draw Fig. 1 and Fig. 2 into ``out``, return the summary."""
    from ..plotting import plot_ecdf, save

    t0 = time.perf_counter()
    raw = monte_carlo(settings)
    summary = {**summarise(raw, settings), "seconds": time.perf_counter() - t0}
    eps1, cap = settings["fig1_epsilon"], settings["gamma_cap_for_plot"]
    frac_inf = summary["fig1"]["fraction_gamma_infinite"]
    ax = plot_ecdf(
        {
            "original max |log-lift| on X_eps^c": raw["fig1"]["original"],
            f"Hsu et al. gamma bound (capped at {cap:g}; infinite for {100 * frac_inf:.2f} %)": (
                np.asarray(raw["fig1"]["gamma"])
            ),
            "optimal (X^c-invariant randomization)": raw["fig1"]["optimal"],
        },
        xlabel=f"abs-log-lift on X_eps^c, eps = {eps1:g} (nats)",
        cap=cap,
    )
    ax.set_title(
        f"Sadeghi et al. Fig. 1: {len(raw['fig1']['original'])} random pmfs "
        f"|S|={settings['n_sensitive']}, |X|={settings['n_observed']}, "
        f"Dirichlet({settings['dirichlet_concentration']:g})"
    )
    save(ax, out / "fig1_loglift_cdf.png")
    ax = plot_ecdf(raw["nmil"], xlabel="NMIL = 1 - I(X;Y)/H(X)")
    ax.set_title(f"Sadeghi et al. Fig. 2: NMIL over {settings['n_pmfs']} random pmfs")
    save(ax, out / "fig2_nmil_cdf.png")
    return summary
