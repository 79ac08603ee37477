"""The exact mechanism maximising the Bayes error within an expected-distortion budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from .._memory import check_allocation
from .._rng import RNGLike, check_rng
from .._validation import check_cost_matrix, check_nonnegative, check_pmf
from ..exceptions import ValidationError
from ._base import Mechanism, Privacy, check_codes
from ._bayes_colgen import column_generation, solve_master

__all__ = ["OptimalBayesResult", "optimal_bayes_mechanism"]


@dataclass(frozen=True)
class OptimalBayesResult(Mechanism):
    """Output of :func:`optimal_bayes_mechanism`: the optimal mechanism and its certificate.

    ``channel()``: the mechanism ``k[x, y]`` as a dense array; ``sparse_channel()``: the same as a
    ``scipy.sparse.csr_array`` (only the releases in use are stored; use it for large grids);
    ``bayes_error``: 1 - sum_y max_s p(s, y) of its release; ``distortion``: its expected
    distance; ``dual_bound``: the objective of a dual-feasible point of the full LP turned into a
    Bayes error (an upper bound on every mechanism within the budget); ``gap`` =
    ``dual_bound - bayes_error`` >= 0 is the optimality certificate; ``support``: the release
    indices that receive mass; ``method``: ``"direct"`` or ``"column_generation"``;
    ``n_iterations``: restricted-master solves (1 for the direct LP); ``converged``: False when
    column generation stopped at ``max_seconds`` (the mechanism is feasible and ``gap`` still
    certifies how far from optimal it can be).
    """

    bayes_error: float
    distortion: float
    dual_bound: float
    gap: float
    support: NDArray[np.int64]
    method: str
    n_iterations: int
    converged: bool
    _channel: sparse.csr_array = field(repr=False)

    def channel(self) -> NDArray[np.float64]:
        """The mechanism ``k[x, y]`` as a dense array (n_observed, n_outputs)."""
        check_allocation("n_observed * n_outputs", self._channel.shape)
        return np.asarray(self._channel.toarray(), dtype=np.float64)

    def sparse_channel(self) -> sparse.csr_array:
        """The mechanism ``k[x, y]`` as a CSR array (a copy)."""
        return sparse.csr_array(self._channel, copy=True)

    def release(self, observed: ArrayLike, rng: RNGLike = None) -> NDArray[np.int64]:
        """One release index per observed index, drawn from the sparse channel's rows."""
        k = self._channel
        codes = check_codes(observed, k.shape[0])
        sub = sparse.csr_array(k[codes])
        cums = np.cumsum(sub.data)
        start = sub.indptr[:-1]
        base = np.where(start > 0, cums[np.maximum(start - 1, 0)], 0.0)
        total = cums[np.maximum(sub.indptr[1:] - 1, 0)] - base
        target = base + check_rng(rng).random(len(codes)) * total
        pos = np.minimum(np.searchsorted(cums, target, side="right"), sub.indptr[1:] - 1)
        return np.asarray(sub.indices[pos], dtype=np.int64)

    @property
    def privacy(self) -> Privacy:
        """The Bayes error of its release on the pmf it was solved for (certified within
        ``gap``)."""
        return Privacy("bayes_error", self.bayes_error, True)

    def to_dict(self) -> dict[str, Any]:
        """The numbers and the support (not the channel)."""
        return {
            "bayes_error": self.bayes_error,
            "distortion": self.distortion,
            "dual_bound": self.dual_bound,
            "gap": self.gap,
            "support": self.support.tolist(),
            "method": self.method,
            "n_iterations": self.n_iterations,
            "converged": self.converged,
        }


def _check_inputs(
    p: ArrayLike, distance: ArrayLike, budget: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    pmf = check_pmf(p, "p")
    d = check_cost_matrix(distance, "distance", n_rows=pmf.shape[1], rows="one per observed value")
    L = check_nonnegative(budget, "budget")
    p_x = pmf.sum(axis=0)
    cheapest = float(p_x @ d.min(axis=1))
    if cheapest - 1e-12 * max(1.0, cheapest) > L:
        raise ValidationError(
            f"`budget` must allow at least one mechanism; got {L!r}, below the cheapest "
            f"expected distortion {cheapest!r}."
        )
    return pmf, d, L


def _solver(p: NDArray[np.float64], d: NDArray[np.float64], method: str) -> str:
    """``"direct"`` or ``"column_generation"``: ``method``, checked, with ``"auto"`` resolved
    (column generation when every location carries one user and the direct LP would exceed
    20,000 variables)."""
    if method not in ("auto", "direct", "column_generation"):
        raise ValidationError(
            f"`method` must be 'auto', 'direct' or 'column_generation'; got {method!r}."
        )
    single_user = bool(((p > 0).sum(axis=0) <= 1).all())
    if method == "column_generation" and not single_user:
        raise ValidationError(
            "`p` must have at most one positive entry per observed value (column) for "
            "method='column_generation'; use method='direct'."
        )
    if method == "auto":
        return "column_generation" if single_user and d.size > 20_000 else "direct"
    return method


def optimal_bayes_mechanism(
    p: ArrayLike,
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

    .. math:: \max_{k}\ 1 - \sum_y \max_s \sum_x p(s, x)\, k(y|x) \quad\text{s.t.}\quad
              \sum_{x,y} p(x)\, k(y|x)\, d(x, y) \le L,\ k \text{ row-stochastic}

    linearised with one variable :math:`t_y \ge \sum_x p(s,x) k(y|x)` per release and sensitive
    value (Romanelli et al. §III, the optimum their learned mechanism is compared with).
    Notation: the paper's user X is ``sensitive``, true location W ``observed``, reported
    location Z the release.

    Parameters
    ----------
    p : array_like, shape (n_sensitive, n_observed)
        Joint pmf ``p[s, x]`` of user (sensitive) and true location (observed).
    distance : array_like, shape (n_observed, n_outputs)
        ``d(x, y)``: cost of releasing y from x (e.g. metres to a grid cell centre).
    budget : float
        The expected-distortion budget L.
    method : {"auto", "direct", "column_generation"}
        ``"direct"`` solves the whole LP at once (``n_locations * n_outputs`` variables).
        ``"column_generation"`` solves it over a growing set of outputs, adding the outputs whose
        reduced cost is negative (all outputs are priced in one vectorised pass) until none is;
        it needs each location to carry one user (one positive entry per column of ``p``),
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
    p, d, L = _check_inputs(p, distance, budget)
    if _solver(p, d, method) == "direct":
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
    k: sparse.csr_array,
    dual_objective: float,
    method: str,
    n_iterations: int,
    converged: bool = True,
) -> OptimalBayesResult:
    p_x = p.sum(axis=0)
    q = np.asarray(k.T @ p.T).T  # p(s, y)
    bayes_error = float(1.0 - q.max(axis=0).sum())
    kc = k.tocoo()
    distortion = float((p_x[kc.row] * kc.data * d[kc.row, kc.col]).sum())
    dual_bound = 1.0 - dual_objective
    support = np.flatnonzero(q.sum(axis=0) > 0)
    return OptimalBayesResult(
        bayes_error,
        distortion,
        dual_bound,
        max(0.0, dual_bound - bayes_error),
        support,
        method,
        n_iterations,
        converged,
        k,
    )


def _direct(p: NDArray[np.float64], d: NDArray[np.float64], L: float) -> OptimalBayesResult:
    n_w, n_z = d.shape
    pair_w, pair_z = (a.ravel() for a in np.indices((n_w, n_z)))
    sol = solve_master(p, d, L, pair_w, pair_z, n_z, None)
    k = sol.k.reshape(n_w, n_z)
    k /= k.sum(axis=1, keepdims=True)
    ks = sparse.csr_array(k)
    ks.eliminate_zeros()
    return _summary(p, d, ks, float(sol.u.sum()) - sol.lam * L, "direct", 1)


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
    return _summary(p, d, k, cg.dual_objective, "column_generation", cg.n_iterations, cg.converged)
