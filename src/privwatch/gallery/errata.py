"""The papers' own mistakes, each shown by a computation (docs/errata.md).

* Romanelli et al. §IV-B, Fig. 9: the "optimal" Bayes error 0.50 at L = 173 m on the synthetic
  data is beaten by a feasible mechanism from the exact LP (:func:`romanelli_l173`).
* Romanelli et al. eq. (18): as printed it equals -I(X;Y), not I(X;Y) (:func:`romanelli_eq18`).
* Tripathy et al. (PPAN) App. H: the operating point (I(X;Z), E||Y-Z||^2) = (1.838, 0.230) is
  impossible: with W = Y, I(X;Z) <= I(X;Y) = 1.084 nats (:func:`ppan_appendix_h`).
* Hsu et al. Tables III-IV: with a binary sensitive attribute the lift is normalised,
  p(0) l(0, x) + p(1) l(1, x) = 1, so i(0, x) ~ 0 forces i(1, x) ~ 0 (:func:`hsu_tables_iii_iv`).
* Hsu et al. eq. (5): Lemma 1 says 2 epsilon-LDP but eq. (5) bounds the ratio by e^epsilon; an
  epsilon-lift-private pmf reaches e^(2 epsilon) (:func:`hsu_eq5`).
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import PrivacyWarning, bin_columns
from ..datasets import (
    COMPAS_BINS,
    load_compas,
    random_joint,
    synthetic_users,
    uniform_prior,
)
from ..estimators import grid_centres
from ..measures import ldp_epsilon, lift_epsilon, log_lift, mutual_information
from ..mechanisms import optimal_bayes_mechanism
from ..theory import gaussian_vector_useful_data

__all__ = [
    "hsu_eq5",
    "hsu_tables_iii_iv",
    "ppan_appendix_h",
    "romanelli_eq18",
    "romanelli_l173",
    "run",
]


def romanelli_l173(cells: int = 26, budget: float = 173.0, seed: int = 0) -> dict[str, float]:
    """Exact Bayes-optimal mechanism on the synthetic test locations within ``budget`` metres.

    The outputs are the centres of a ``cells x cells`` grid over the 6.5 km square; any grid gives
    a *feasible* mechanism, so its Bayes error is a lower bound on the true optimum.
    """
    data = synthetic_users(rng=seed)
    outputs = grid_centres((-3250.0, 3250.0, -3250.0, 3250.0), cells)
    dist = np.linalg.norm(data.test[:, None] - outputs[None], axis=-1)
    t0 = time.perf_counter()
    res = optimal_bayes_mechanism(uniform_prior(data.test_sensitive), dist, budget, gap_tol=1e-4)
    return {
        "cells": cells,
        "budget_m": budget,
        "bayes_error": res.bayes_error,
        "gap": res.gap,
        "distortion_m": res.distortion,
        "seconds": time.perf_counter() - t0,
    }


def romanelli_eq18(p: ArrayLike) -> dict[str, float]:
    """Eq. (18) as printed, sum_x P(x) log P(x) - sum_{x,y} P(x,y) log(P(x,y)/P(y)), next to
    I(X;Y), for a joint pmf ``p[x, y]`` (true id x, predicted id y)."""
    arr = np.asarray(p, dtype=float)
    p_x, p_y = arr.sum(axis=1), arr.sum(axis=0)
    nz = arr > 0
    first = float(np.sum(p_x[p_x > 0] * np.log(p_x[p_x > 0])))
    second = float(np.sum(arr[nz] * np.log(arr[nz] / np.broadcast_to(p_y, arr.shape)[nz])))
    return {"eq18_as_printed": first - second, "mutual_information": mutual_information(arr)}


def ppan_appendix_h(
    rho: tuple[float, ...] = (0.47, 0.24, 0.85, 0.07, 0.66),
    point: tuple[float, float] = (1.838, 0.230),
) -> dict[str, float]:
    """I(X;Y) = -1/2 sum log(1 - rho_i^2) of the 5-dim Gaussian model, the claimed point, and the
    optimum at the claimed distortion (Prop. 2)."""
    i_xy = -0.5 * float(np.sum(np.log1p(-np.square(rho))))
    return {
        "mutual_information_xy": i_xy,
        "claimed_leakage": point[0],
        "claimed_distortion": point[1],
        "optimum_at_claimed_distortion": gaussian_vector_useful_data(point[1], rho=list(rho)),
    }


def hsu_tables_iii_iv(tolerance: float = 0.05) -> dict[str, float]:
    """With binary S, |i(0, x)| <= t forces |i(1, x)| <= max_+- |log((1 - p0 e^{+-t}) / p1)|;
    checked on the exact plug-in lift of binned COMPAS (every record, no estimation)."""
    df = bin_columns(load_compas(), COMPAS_BINS)
    obs = ["sex", "age", "priors_count", "length_of_stay", "decile_score"]
    keys = df[obs].astype(str).agg("|".join, axis=1)
    codes, cells = np.unique(keys.to_numpy(), return_inverse=True)
    counts = np.zeros((2, len(codes)))
    np.add.at(counts, (df["race_code"].to_numpy(), cells), 1.0)
    p = counts / counts.sum()
    p0, p1 = p.sum(axis=1)
    with np.errstate(divide="ignore"):
        ll = log_lift(p)
    near0 = np.abs(ll[0]) <= tolerance
    bound = max(abs(math.log((1 - p0 * math.exp(s * tolerance)) / p1)) for s in (1.0, -1.0))
    norm = p0 * np.exp(ll[0]) + p1 * np.exp(ll[1])
    return {
        "p_s0": float(p0),
        "tolerance": tolerance,
        "bound_on_abs_i1": bound,
        "n_cells_with_abs_i0_within_tolerance": int(near0.sum()),
        "max_abs_i1_among_them": float(np.max(np.abs(ll[1][near0]))) if near0.any() else 0.0,
        "max_abs_normalisation_error": float(np.max(np.abs(norm - 1))),
    }


def hsu_eq5(epsilon: float = 0.5, q: float = 0.01) -> dict[str, float]:
    """An epsilon-lift-private pmf whose P_{S|X} reaches the ratio e^{2 epsilon}.

    S = {0, 1} with P(S=0) = q small; X = {0, 1} weighted so that l(0, x0) = e^eps and
    l(0, x1) = e^-eps; l(1, .) stays within e^{+-eps} because q is small.
    """
    w = (1 - math.exp(-epsilon)) / (math.exp(epsilon) - math.exp(-epsilon))
    p_x = np.array([w, 1 - w])
    p_s0_given_x = q * np.array([math.exp(epsilon), math.exp(-epsilon)])
    k = np.stack([p_s0_given_x, 1 - p_s0_given_x], axis=1)  # k[x, s] = P(s | x)
    joint = (k * p_x[:, None]).T  # p[s, x]
    return {
        "epsilon": epsilon,
        "lift_epsilon": lift_epsilon(joint),
        "ldp_epsilon_of_p_s_given_x": ldp_epsilon(k),
        "eq5_bound_log": epsilon,
        "lemma1_bound_log": 2 * epsilon,
    }


def run(settings: dict[str, Any], out: Path) -> dict[str, Any]:
    """Compute every erratum; ``out`` receives no figure (the numbers are the record)."""
    rng = np.random.default_rng(settings["seed"])
    joints = [random_joint(4, 4, rng=rng) for _ in range(settings["n_random_joints"])]
    eq18 = [romanelli_eq18(p) for p in joints]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        tables = hsu_tables_iii_iv(settings["tables_tolerance"])
    return {
        "romanelli_l173": romanelli_l173(settings["l173_cells"]),
        "romanelli_eq18": {
            "max_abs_eq18_plus_mi": max(
                abs(r["eq18_as_printed"] + r["mutual_information"]) for r in eq18
            ),
            "example": eq18[0],
            "n_joints": len(eq18),
        },
        "ppan_appendix_h": ppan_appendix_h(),
        "hsu_tables_iii_iv": tables,
        "hsu_eq5": hsu_eq5(settings["eq5_epsilon"]),
    }
