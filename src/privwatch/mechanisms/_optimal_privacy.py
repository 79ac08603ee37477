"""The exact privacy-distortion optimum for finite alphabets (PPAN problem (1))."""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.optimize import linprog

from .._validation import check_cost_matrix, check_nonnegative, check_pmf
from ..exceptions import PrivwatchError, ValidationError
from ..measures import mutual_information

__all__ = ["OptimalPrivacyResult", "optimal_privacy_mechanism"]


@dataclass(frozen=True)
class OptimalPrivacyResult:
    """Output of :func:`optimal_privacy_mechanism`.

    ``channel[w, z]``: the release mechanism; ``mutual_information``: I(X; Z) in nats;
    ``distortion``: E[d(Y, Z)]; ``lower_bound``: a certified lower bound on every feasible
    mechanism's leakage (from the Frank-Wolfe duality gap, computed by an independent HiGHS LP);
    ``gap`` = ``mutual_information - lower_bound`` >= 0.
    """

    channel: NDArray[np.float64]
    mutual_information: float
    distortion: float
    lower_bound: float
    gap: float


def _gradient(p_wx: NDArray[np.float64], k: NDArray[np.float64]) -> NDArray[np.float64]:
    """d I(X; Z) / d k[w, z] = sum_x P(w, x) log(P(x, z) / (P(x) P(z)))."""
    p_xz = p_wx.T @ k
    p_x = p_xz.sum(axis=1, keepdims=True)
    p_z = p_xz.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.where(p_xz > 0, np.log(p_xz / (p_x * p_z)), 0.0)
    return np.asarray(p_wx @ log_ratio, dtype=np.float64)


def _linear_minimum(c: NDArray[np.float64], cost: NDArray[np.float64], delta: float) -> float:
    """min <c, s> over row-stochastic s[w, z] with <cost, s> <= delta (HiGHS)."""
    n_w, n_z = c.shape
    a_eq = sparse.kron(sparse.identity(n_w), np.ones((1, n_z)), format="csr")
    res = linprog(
        c.ravel(),
        A_ub=cost.ravel()[None, :],
        b_ub=[delta],
        A_eq=a_eq,
        b_eq=np.ones(n_w),
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        raise PrivwatchError(f"the certificate LP failed: {res.message}")
    return float(res.fun)


def optimal_privacy_mechanism(
    p_wxy: ArrayLike,
    distortion: ArrayLike,
    delta: float,
    *,
    solver: str | None = None,
) -> OptimalPrivacyResult:
    r"""The release mechanism with least leakage I(X; Z) within a distortion budget.

    .. math:: \min_{P_{Z|W}} I(X; Z) \quad \text{s.t.}\quad
              \mathbb{E}[d(Y, Z)] = \sum_{w,y,z} P(w, y)\, k(z|w)\, d(y, z) \le \delta

    (Tripathy, Wang, Ishwar, problem (1); the "conventional approach" when ``p_wxy`` is an
    estimated pmf). I(X; Z) is convex in the channel k, so the problem is a convex program; it is
    solved with CVXPY (exponential-cone solver Clarabel by default) and then *certified*
    independently: for the convex objective f, the Frank-Wolfe gap
    :math:`\langle \nabla f(k), k - s^*\rangle` with :math:`s^*` the feasible channel minimising
    :math:`\langle \nabla f(k), s\rangle` (one HiGHS LP) bounds :math:`f(k) - f^*`.

    Parameters
    ----------
    p_wxy : array_like, shape (n_observed, n_sensitive, n_useful)
        Joint pmf of the observation W, the sensitive X and the useful Y. For the "useful data
        only" model W = Y, put P(y, x, y) on the diagonal; for "full data" W = (X, Y), flatten
        (x, y) into w.
    distortion : array_like, shape (n_useful, n_outputs)
        ``d(y, z)``, e.g. ``1 - np.eye(m)`` for Hamming.
    delta : float
        The distortion budget.
    solver : str or None
        A CVXPY solver name (default: CLARABEL).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.zeros((2, 2, 2)); p[0, 0, 0] = p[1, 1, 1] = 0.5   # W = Y = X, one bit
    >>> r = optimal_privacy_mechanism(p, 1 - np.eye(2), 0.25)
    >>> round(r.mutual_information, 4), r.gap < 1e-6   # = ln 2 - h(0.25)
    (0.131, True)
    """
    cp: Any = importlib.import_module("cvxpy")

    p = check_pmf(p_wxy, "p_wxy", ndim=3)
    n_w, n_x, n_y = p.shape
    d = check_cost_matrix(distortion, "distortion", n_rows=n_y, rows="one per useful value")
    budget = check_nonnegative(delta, "delta")
    p_wx = p.sum(axis=2)
    p_x = p_wx.sum(axis=0)
    cost = p.sum(axis=1) @ d  # cost[w, z] = sum_y P(w, y) d(y, z)
    cheapest = float(cost.min(axis=1).sum())
    if cheapest - 1e-12 > budget:
        raise ValidationError(
            f"`delta` must allow at least one mechanism; got {budget!r}, below the least "
            f"expected distortion {cheapest!r}."
        )
    # A budget above the dearest mechanism's distortion constrains nothing; clamping it keeps
    # the conic solver's data well scaled (delta = 1e13 made CLARABEL fail).
    budget = min(budget, float(cost.max(axis=1).sum()))
    n_z = d.shape[1]
    k = cp.Variable((n_w, n_z), nonneg=True)
    p_xz = p_wx.T @ k
    p_z = cp.sum(p_xz, axis=0)
    outer = cp.reshape(p_x, (n_x, 1), order="C") @ cp.reshape(p_z, (1, n_z), order="C")
    problem = cp.Problem(
        cp.Minimize(cp.sum(cp.rel_entr(p_xz, outer))),
        [cp.sum(k, axis=1) == 1, cp.sum(cp.multiply(cost, k)) <= budget],
    )
    try:
        with warnings.catch_warnings():  # "inaccurate" notices: the certificate below decides
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=solver or cp.CLARABEL)
    except cp.error.SolverError as exc:
        raise PrivwatchError(f"the convex solver failed: {exc}") from None
    if k.value is None:
        raise PrivwatchError(f"the convex solver failed: status {problem.status}")
    ch = np.clip(np.asarray(k.value, dtype=np.float64), 0.0, None)
    ch /= ch.sum(axis=1, keepdims=True)
    # the solver may overshoot the budget by its tolerance: pull back towards the cheapest channel
    spent = float((cost * ch).sum())
    if spent > budget:
        cheap = np.zeros_like(ch)
        cheap[np.arange(n_w), cost.argmin(axis=1)] = 1.0
        t = (spent - budget) / max(spent - cheapest, 1e-300)
        ch = (1 - t) * ch + t * cheap
    leak = mutual_information(p_wx.T @ ch)
    grad = _gradient(p_wx, ch)
    fw_gap = max(0.0, float((grad * ch).sum()) - _linear_minimum(grad, cost, budget))
    lower = max(0.0, leak - fw_gap)
    if leak - lower > 1e-4:
        warnings.warn(
            f"the solver's channel is certified only to within {leak - lower:.2g} nats of the "
            "optimum; try another `solver`.",
            RuntimeWarning,
            stacklevel=2,
        )
    return OptimalPrivacyResult(ch, leak, float((cost * ch).sum()), lower, leak - lower)
