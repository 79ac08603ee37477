"""The exact mechanism maximising the Bayes error within an expected-distortion budget."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.optimize import linprog

from .._validation import check_nonnegative, check_pmf
from ..exceptions import PrivwatchError, ValidationError

__all__ = ["OptimalBayesResult", "optimal_bayes_mechanism"]


@dataclass(frozen=True)
class OptimalBayesResult:
    """Output of :func:`optimal_bayes_mechanism`.

    ``channel[w, z]``: the mechanism; ``bayes_error``: 1 - sum_z max_x P(x, z) of its release;
    ``distortion``: its expected distance; ``dual_bound``: the LP dual objective turned into a
    Bayes error (an upper bound on every mechanism within the budget); ``gap`` =
    ``dual_bound - bayes_error`` >= 0 is the optimality certificate.
    """

    channel: NDArray[np.float64]
    bayes_error: float
    distortion: float
    dual_bound: float
    gap: float


def optimal_bayes_mechanism(
    prior: ArrayLike, distance: ArrayLike, budget: float
) -> OptimalBayesResult:
    r"""Exact Bayes-error-optimal mechanism by linear programming (HiGHS).

    .. math:: \max_{k}\ 1 - \sum_z \max_x \sum_w P(x, w)\, k(z|w) \quad\text{s.t.}\quad
              \sum_{w,z} P(w)\, k(z|w)\, d(w, z) \le L,\ k \text{ row-stochastic}

    linearised with one variable :math:`t_z \ge \sum_w P(x,w) k(z|w)` per output and sensitive
    value (Romanelli et al. §III, the optimum their learned mechanism is compared with).

    Parameters
    ----------
    prior : array_like, shape (n_sensitive, n_locations)
        Joint pmf ``P(x, w)`` of user (sensitive) and true location (observed).
    distance : array_like, shape (n_locations, n_outputs)
        ``d(w, z)``: cost of reporting z from w (e.g. metres to a grid cell centre).
    budget : float
        The expected-distortion budget L.

    Examples
    --------
    >>> # two users at distance 100, budget 40 (the paper's example, §IV-A): Bayes error 2/5
    >>> r = optimal_bayes_mechanism([[0.5, 0], [0, 0.5]], [[0, 100], [100, 0]], 40)
    >>> round(r.bayes_error, 6), round(r.distortion, 6), r.gap < 1e-9
    (0.4, 40.0, True)
    """
    p = check_pmf(prior, "prior")
    d = np.asarray(distance, dtype=np.float64)
    n_x, n_w = p.shape
    if d.ndim != 2 or d.shape[0] != n_w or not np.isfinite(d).all() or (d < 0).any():
        raise ValidationError(
            f"`distance` must be a finite non-negative array with {n_w} rows (one per location); "
            f"got shape {d.shape}."
        )
    L = check_nonnegative(budget, "budget")
    n_z = d.shape[1]
    p_w = p.sum(axis=0)
    n_k = n_w * n_z  # k[w, z] flattened row-major, then t[z]
    cost = np.concatenate([np.zeros(n_k), np.ones(n_z)])
    # sum_w P(x, w) k[w, z] - t_z <= 0 for every (x, z)
    rows_x = []
    for x in range(n_x):
        block = sparse.kron(sparse.csr_matrix(p[x][None, :]), sparse.identity(n_z))
        rows_x.append(sparse.hstack([block, -sparse.identity(n_z)]))
    budget_row = sparse.hstack(
        [sparse.csr_matrix((p_w[:, None] * d).reshape(1, -1)), sparse.csr_matrix((1, n_z))]
    )
    a_ub = sparse.vstack([*rows_x, budget_row])
    b_ub = np.concatenate([np.zeros(n_x * n_z), [L]])
    a_eq = sparse.hstack(
        [sparse.kron(sparse.identity(n_w), np.ones((1, n_z))), sparse.csr_matrix((n_w, n_z))]
    )
    res = linprog(
        cost,
        A_ub=a_ub.tocsr(),
        b_ub=b_ub,
        A_eq=a_eq.tocsr(),
        b_eq=np.ones(n_w),
        bounds=(0, None),
        method="highs",
    )
    if res.status == 2:
        raise ValidationError(
            f"`budget` must allow at least one mechanism; got {L!r}, below the cheapest "
            f"expected distortion {float((p_w * d.min(axis=1)).sum())!r}."
        )
    if res.status != 0:
        raise PrivwatchError(f"the LP solver failed: {res.message}")
    k = np.clip(res.x[:n_k].reshape(n_w, n_z), 0.0, None)
    k /= k.sum(axis=1, keepdims=True)
    q = p @ k
    bayes_error = float(1.0 - q.max(axis=0).sum())
    dual = float(res.ineqlin.marginals @ b_ub + res.eqlin.marginals @ np.ones(n_w))
    dual_bound = 1.0 - dual
    return OptimalBayesResult(
        k,
        bayes_error,
        float((p_w[:, None] * k * d).sum()),
        dual_bound,
        max(0.0, dual_bound - bayes_error),
    )
