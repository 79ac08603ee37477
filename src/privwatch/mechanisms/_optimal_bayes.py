"""The exact mechanism maximising the Bayes error within an expected-distortion budget."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from .._validation import check_cost_matrix, check_nonnegative, check_pmf
from ..exceptions import ValidationError
from ._bayes_colgen import column_generation, solve_master

__all__ = ["OptimalBayesResult", "optimal_bayes_mechanism"]


@dataclass(frozen=True)
class OptimalBayesResult:
    """Output of :func:`optimal_bayes_mechanism`.

    ``channel[w, z]``: the mechanism (a dense array for ``method="direct"``, a
    ``scipy.sparse.csr_array`` for column generation: only the outputs in use are stored);
    ``bayes_error``: 1 - sum_z max_x P(x, z) of its release; ``distortion``: its expected distance;
    ``dual_bound``: the objective of a dual-feasible point of the full LP turned into a Bayes error
    (an upper bound on every mechanism within the budget); ``gap`` = ``dual_bound - bayes_error``
    >= 0 is the optimality certificate; ``support``: the output indices that receive mass;
    ``n_iterations``: restricted-master solves (1 for the direct LP); ``converged``: False when
    column generation stopped at ``max_seconds`` (the mechanism is feasible and ``gap`` still
    certifies how far from optimal it can be).
    """

    channel: NDArray[np.float64] | sparse.csr_array
    bayes_error: float
    distortion: float
    dual_bound: float
    gap: float
    support: NDArray[np.int64]
    method: str
    n_iterations: int
    converged: bool = True


def _check_inputs(
    prior: ArrayLike, distance: ArrayLike, budget: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    p = check_pmf(prior, "prior")
    d = check_cost_matrix(distance, "distance", n_rows=p.shape[1], rows="one per location")
    L = check_nonnegative(budget, "budget")
    p_w = p.sum(axis=0)
    cheapest = float(p_w @ d.min(axis=1))
    if cheapest - 1e-12 * max(1.0, cheapest) > L:
        raise ValidationError(
            f"`budget` must allow at least one mechanism; got {L!r}, below the cheapest "
            f"expected distortion {cheapest!r}."
        )
    return p, d, L


def optimal_bayes_mechanism(
    prior: ArrayLike,
    distance: ArrayLike,
    budget: float,
    *,
    method: str = "auto",
    tol: float = 1e-9,
    gap_tol: float = 1e-6,
    max_iter: int = 500,
    batch: int = 50,
    max_seconds: float | None = None,
    progress: bool = False,
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
    method : {"auto", "direct", "column_generation"}
        ``"direct"`` solves the whole LP at once (``n_locations * n_outputs`` variables).
        ``"column_generation"`` solves it over a growing set of outputs, adding the outputs whose
        reduced cost is negative (all outputs are priced in one vectorised pass) until none is;
        it needs each location to carry one user (one positive entry per column of ``prior``),
        as for individual check-ins. ``"auto"`` uses column generation when it applies and the
        direct LP would exceed 20,000 variables.
    tol : float
        Reduced-cost tolerance of column generation.
    gap_tol : float
        Column generation stops once the certified gap (``gap``: the dual bound minus the Bayes
        error of the current mechanism) is at most this.
    max_iter, batch : int
        Column generation: at most ``max_iter`` master solves, at most ``batch`` outputs added
        per solve.
    max_seconds : float or None
        Column generation: stop after this long with the current mechanism and its certified
        gap (``converged=False``) instead of running to ``gap_tol``.
    progress : bool
        Print one line per column-generation iteration (objective, bound, columns).

    Examples
    --------
    >>> # two users at distance 100, budget 40 (the paper's example, §IV-A): Bayes error 2/5
    >>> r = optimal_bayes_mechanism([[0.5, 0], [0, 0.5]], [[0, 100], [100, 0]], 40)
    >>> round(r.bayes_error, 6), round(r.distortion, 6), r.gap < 1e-9
    (0.4, 40.0, True)
    """
    p, d, L = _check_inputs(prior, distance, budget)
    if method not in ("auto", "direct", "column_generation"):
        raise ValidationError(
            f"`method` must be 'auto', 'direct' or 'column_generation'; got {method!r}."
        )
    single_user = bool(((p > 0).sum(axis=0) <= 1).all())
    if method == "column_generation" and not single_user:
        raise ValidationError(
            "`prior` must have at most one positive entry per location (column) for "
            "method='column_generation'; use method='direct'."
        )
    if method == "auto":
        method = "column_generation" if single_user and d.size > 20_000 else "direct"
    if method == "direct":
        return _direct(p, d, L)
    return _colgen(
        p,
        d,
        L,
        tol=tol,
        gap_tol=gap_tol,
        max_iter=max_iter,
        batch=batch,
        max_seconds=max_seconds,
        progress=progress,
    )


def _summary(
    p: NDArray[np.float64],
    d: NDArray[np.float64],
    k: NDArray[np.float64] | sparse.csr_array,
    dual_objective: float,
    method: str,
    n_iterations: int,
) -> OptimalBayesResult:
    p_w = p.sum(axis=0)
    q = np.asarray(sparse.csr_array(k).T @ p.T).T  # P(x, z)
    bayes_error = float(1.0 - q.max(axis=0).sum())
    if sparse.issparse(k):
        kc = sparse.csr_array(k).tocoo()
        distortion = float((p_w[kc.row] * kc.data * d[kc.row, kc.col]).sum())
    else:
        distortion = float((p_w[:, None] * k * d).sum())
    dual_bound = 1.0 - dual_objective
    support = np.flatnonzero(q.sum(axis=0) > 0)
    return OptimalBayesResult(
        k,
        bayes_error,
        distortion,
        dual_bound,
        max(0.0, dual_bound - bayes_error),
        support,
        method,
        n_iterations,
    )


def _direct(p: NDArray[np.float64], d: NDArray[np.float64], L: float) -> OptimalBayesResult:
    n_w, n_z = d.shape
    pair_w, pair_z = (a.ravel() for a in np.indices((n_w, n_z)))
    sol = solve_master(p, d, L, pair_w, pair_z, n_z, None)
    k = sol.k.reshape(n_w, n_z)
    k /= k.sum(axis=1, keepdims=True)
    return _summary(p, d, k, float(sol.u.sum()) - sol.lam * L, "direct", 1)


def _colgen(
    p: NDArray[np.float64],
    d: NDArray[np.float64],
    L: float,
    *,
    tol: float,
    gap_tol: float,
    max_iter: int,
    batch: int,
    max_seconds: float | None,
    progress: bool,
) -> OptimalBayesResult:
    n_w, n_z = d.shape
    p_w = p.sum(axis=0)
    alive = np.flatnonzero(p_w > 0)
    order = alive[np.argsort(p[:, alive].argmax(axis=0), kind="stable")]

    def report(it: int, objective: float, bound: float, n_cols: int) -> None:
        print(
            f"column generation {it}: Bayes error {1 - objective:.6f}, "
            f"bound {1 - bound:.6f}, {n_cols} outputs",
            flush=True,
        )

    cg = column_generation(
        p[:, order],
        d[order],
        L,
        tol=tol,
        gap_tol=gap_tol,
        max_iter=max_iter,
        batch=batch,
        max_seconds=max_seconds,
        callback=report if progress else None,
    )
    rows = order[cg.pair_w]
    dead = np.setdiff1d(np.arange(n_w), alive)
    # zero-mass locations: report the nearest output (any choice is optimal)
    k = sparse.coo_array(
        (
            np.concatenate([cg.k, np.ones(len(dead))]),
            (np.concatenate([rows, dead]), np.concatenate([cg.pair_z, d[dead].argmin(axis=1)])),
        ),
        shape=(n_w, n_z),
    ).tocsr()
    k.eliminate_zeros()
    k = sparse.csr_array(k.multiply(1.0 / np.asarray(k.sum(axis=1)).ravel()[:, None]))
    res = _summary(p, d, k, cg.dual_objective, "column_generation", cg.n_iterations)
    return dataclasses.replace(res, converged=cg.converged)
