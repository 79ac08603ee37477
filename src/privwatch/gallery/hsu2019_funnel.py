"""Hsu, Asoodeh, Calmon §III-B: the privacy-funnel bound (eq. 10) and Remark 1, on COMPAS.

On the exact (plug-in) joint pmf of the binned COMPAS training split, over a grid of epsilon:

* Prop. 1-2: every leakage measure L(S;Y) of the merge release (mutual information, maximal
  leakage, the lift-privacy level) is at most gamma; the largest L - gamma is reported (<= 0).
* Eq. (10): F(P, lambda) = min L(S;Y) - lambda I(X;Y) <= min_eps gamma(eps) - lambda I(X;Y)(eps)
  (the paper's bound), next to the tighter min_eps L(S;Y) - lambda I(X;Y) of the releases
  themselves, with L = I(S;Y).
* Remark 1 (conference version): a randomization R_Y supported on all of X rather than X^c:
  leakage and utility of R_Y = P_X and uniform over X, next to the merge of X^c.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .. import bin_columns
from .. import watchdog as wd
from ..datasets import load_compas
from ..measures import lift_epsilon, maximal_leakage, mutual_information
from .hsu2019_compas_plugin import compas_counts

__all__ = ["release_channel", "run"]


def release_channel(keep: np.ndarray, r: np.ndarray | None) -> np.ndarray:
    """Hsu et al. eq. (9): Y = X on ``keep``, else Y ~ ``r`` (``None``: merge onto the first
    flagged symbol). ``r`` may charge any symbol (Remark 1)."""
    k = np.diag(keep.astype(float))
    flagged = np.flatnonzero(~keep)
    if len(flagged):
        if r is None:
            k[flagged, flagged[0]] = 1.0
        else:
            k[flagged] = r
    return k


def _point(p: np.ndarray, keep: np.ndarray, r: np.ndarray | None) -> dict[str, float]:
    k = release_channel(keep, r)
    released = p @ k
    return {
        "utility": mutual_information(p.sum(axis=0)[:, None] * k),
        "mutual_information": mutual_information(released),
        "maximal_leakage": maximal_leakage(released),
        "lift_epsilon": lift_epsilon(released),
    }


def run(settings: dict[str, Any], out: Path) -> dict[str, Any]:
    """Compute the checks and draw the bound next to the releases' objective into ``out``."""
    from ..plotting import save

    df = bin_columns(load_compas(), settings["bins"])
    order = np.random.default_rng(settings["seed"]).permutation(len(df))
    train = df.iloc[order[: round(settings["train_fraction"] * len(df))]]
    n = compas_counts(train, settings["observed"], {})
    p = n / n.sum()
    p_x = p.sum(axis=0)
    rows = []
    for eps in np.linspace(**settings["epsilons"]):
        keep = wd.partition(p, float(eps))
        row = {"epsilon": float(eps), "gamma": wd.gamma_bound(p, float(eps))}
        row.update(_point(p, keep, None))
        rows.append(row)
    curve = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    excess = {
        m: float(np.max(curve[m] - curve["gamma"]))
        for m in ("mutual_information", "maximal_leakage", "lift_epsilon")
    }
    funnel = {}
    for lam in settings["lambdas"]:
        bound = curve["gamma"] - lam * curve["utility"]
        achieved = curve["mutual_information"] - lam * curve["utility"]
        funnel[f"lambda={lam:g}"] = {
            "paper_bound": float(np.min(bound)),
            "paper_bound_epsilon": float(curve["epsilon"][np.argmin(bound)]),
            "watchdog_objective": float(np.min(achieved)),
            "watchdog_objective_epsilon": float(curve["epsilon"][np.argmin(achieved)]),
            "trivial_lower_bound": -lam * mutual_information(np.diag(p_x)),
        }
    remark = {}
    for eps in settings["remark1_epsilons"]:
        keep = wd.partition(p, eps)
        uniform = np.full(len(p_x), 1 / len(p_x))
        remark[f"eps={eps:g}"] = {
            "merge_on_flagged": _point(p, keep, None),
            "r_equals_p_x_on_all_x": _point(p, keep, p_x),
            "uniform_on_all_x": _point(p, keep, uniform),
        }
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for lam in settings["lambdas"]:
        ax.plot(
            curve["epsilon"],
            curve["gamma"] - lam * curve["utility"],
            "--",
            label=f"eq. (10) bound, lambda={lam:g}",
        )
        ax.plot(
            curve["epsilon"],
            curve["mutual_information"] - lam * curve["utility"],
            label=f"I(S;Y) - lambda I(X;Y), lambda={lam:g}",
        )
    ax.set_xlabel("epsilon")
    ax.set_ylabel("privacy-funnel objective (nats)")
    n_inf = int(np.isinf(curve["gamma"]).sum())
    ax.set_title(
        f"COMPAS (binned, train): eq. (10) bound is +inf for {n_inf}/{len(rows)} epsilons",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    save(fig, out / "funnel_bound.png")
    return {
        "n_symbols": int(p.shape[1]),
        "entropy_x": mutual_information(np.diag(p_x)),
        "max_leakage_minus_gamma": excess,
        "funnel": funnel,
        "remark1": remark,
        "curve": rows,
    }
