"""The exact privacy-distortion optimum for finite alphabets (PPAN problem (1)).

Orientation: the joint pmf is ``p[s, x, u]`` (sensitive, observed, useful), the mechanism a
channel ``k[x, y]`` from observed values to releases, the cost a matrix ``distance[u, y]``.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.optimize import linprog

from .._validation import check_cost_matrix, check_nonnegative, check_pmf
from ..exceptions import PrivwatchError, ValidationError
from ..measures import mutual_information
from ._base import FiniteMechanism, Privacy

__all__ = ["OptimalPrivacyResult", "optimal_privacy_mechanism"]


@dataclass(frozen=True)
class OptimalPrivacyResult(FiniteMechanism):
    """Output of :func:`optimal_privacy_mechanism`: the optimal mechanism and its certificate.

    ``channel()``: the release mechanism ``k[x, y]`` (dense); ``mutual_information``: its leakage
    I(S; Y) in nats; ``distortion``: E[d(U, Y)]; ``lower_bound``: a certified lower bound on every
    feasible mechanism's leakage (from the Frank-Wolfe duality gap, computed by an independent
    HiGHS LP); ``gap`` = ``mutual_information - lower_bound`` >= 0.
    """

    mutual_information: float
    distortion: float
    lower_bound: float
    gap: float
    _channel: NDArray[np.float64] = field(repr=False)

    def channel(self) -> NDArray[np.float64]:
        """The optimal channel ``k[x, y]`` (a copy)."""
        return self._channel.copy()

    @property
    def privacy(self) -> Privacy:
        """The leakage I(S; Y) (nats) on the pmf it was solved for, certified within ``gap``."""
        return Privacy("mutual_information", self.mutual_information, True)

    def to_dict(self) -> dict[str, float]:
        """The numbers (not the channel)."""
        return {
            "mutual_information": self.mutual_information,
            "distortion": self.distortion,
            "lower_bound": self.lower_bound,
            "gap": self.gap,
        }


def _gradient(p_sx: NDArray[np.float64], k: NDArray[np.float64]) -> NDArray[np.float64]:
    """d I(S; Y) / d k[x, y] = sum_s P(s, x) log(P(s, y) / (P(s) P(y)))."""
    p_sy = p_sx @ k
    p_s = p_sy.sum(axis=1, keepdims=True)
    p_y = p_sy.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.where(p_sy > 0, np.log(p_sy / (p_s * p_y)), 0.0)
    return np.asarray(p_sx.T @ log_ratio, dtype=np.float64)


def _linear_minimum(c: NDArray[np.float64], cost: NDArray[np.float64], budget: float) -> float:
    """min <c, k> over row-stochastic k[x, y] with <cost, k> <= budget (HiGHS)."""
    n_x, n_y = c.shape
    a_eq = sparse.kron(sparse.identity(n_x), np.ones((1, n_y)), format="csr")
    res = linprog(
        c.ravel(),
        A_ub=cost.ravel()[None, :],
        b_ub=[budget],
        A_eq=a_eq,
        b_eq=np.ones(n_x),
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        raise PrivwatchError(f"the certificate LP failed: {res.message}")
    return float(res.fun)


def optimal_privacy_mechanism(
    p: ArrayLike,
    distance: ArrayLike,
    budget: float,
    *,
    solver: str | None = None,
) -> OptimalPrivacyResult:
    r"""The release mechanism with least leakage I(S; Y) within a distortion budget.

    .. math:: \min_{k} I(S; Y) \quad \text{s.t.}\quad
              \mathbb{E}[d(U, Y)] = \sum_{x,u,y} p(x, u)\, k(y|x)\, d(u, y) \le L

    Notation: Tripathy, Wang, Ishwar write X (sensitive), W (observed), Y (useful), Z (release);
    this is their problem (1) (the "conventional approach" when ``p`` is an estimated pmf).
    I(S; Y) is convex in the channel k, so the problem is a convex program; it is solved with
    CVXPY (exponential-cone solver Clarabel by default) and then *certified* independently: for
    the convex objective f, the Frank-Wolfe gap :math:`\langle \nabla f(k), k - k^*\rangle` with
    :math:`k^*` the feasible channel minimising :math:`\langle \nabla f(k), \cdot\rangle` (one
    HiGHS LP) bounds :math:`f(k) - f^*`.

    Parameters
    ----------
    p : array_like, shape (n_sensitive, n_observed, n_useful)
        Joint pmf ``p[s, x, u]`` of the sensitive, the observed and the useful variables. For the
        "useful data only" model (observed = useful) put ``p(s, u)`` on the diagonal
        ``p[s, u, u]``; for "full data" (observed = (sensitive, useful)) flatten (s, u) into x.
    distance : array_like, shape (n_useful, n_outputs)
        The cost ``d(u, y)`` of releasing y when the useful value is u, e.g. ``1 - np.eye(m)``
        for Hamming.
    budget : float
        The expected-distortion budget L.
    solver : str or None
        A CVXPY solver name (default: CLARABEL).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.zeros((2, 2, 2)); p[0, 0, 0] = p[1, 1, 1] = 0.5   # S = X = U, one bit
    >>> r = optimal_privacy_mechanism(p, 1 - np.eye(2), 0.25)
    >>> round(r.mutual_information, 4), r.gap < 1e-6   # = ln 2 - h(0.25)
    (0.131, True)
    """
    pmf = check_pmf(p, "p", ndim=3)
    d = check_cost_matrix(distance, "distance", n_rows=pmf.shape[2], rows="one per useful value")
    limit = check_nonnegative(budget, "budget")
    p_sx = pmf.sum(axis=2)
    cost = pmf.sum(axis=0) @ d  # cost[x, y] = sum_u p(x, u) d(u, y)
    cheapest = float(cost.min(axis=1).sum())
    if cheapest - 1e-12 > limit:
        raise ValidationError(
            f"`budget` must allow at least one mechanism; got {limit!r}, below the least "
            f"expected distortion {cheapest!r}."
        )
    # A budget above the dearest mechanism's distortion constrains nothing; clamping it keeps
    # the conic solver's data well scaled (budget = 1e13 made CLARABEL fail).
    limit = min(limit, float(cost.max(axis=1).sum()))
    k = _solve(p_sx, cost, limit, solver)
    k = _within_budget(k, cost, limit, cheapest)
    leak = mutual_information(p_sx @ k)
    grad = _gradient(p_sx, k)
    fw_gap = max(0.0, float((grad * k).sum()) - _linear_minimum(grad, cost, limit))
    lower = max(0.0, leak - fw_gap)
    if leak - lower > 1e-4:
        warnings.warn(
            f"the solver's channel is certified only to within {leak - lower:.2g} nats of the "
            "optimum; try another `solver`.",
            RuntimeWarning,
            stacklevel=2,
        )
    return OptimalPrivacyResult(leak, float((cost * k).sum()), lower, leak - lower, k)


def _solve(
    p_sx: NDArray[np.float64], cost: NDArray[np.float64], budget: float, solver: str | None
) -> NDArray[np.float64]:
    """The convex program min I(S; Y) s.t. <cost, k> <= budget, by CVXPY; rows renormalised."""
    cp: Any = importlib.import_module("cvxpy")
    n_s = p_sx.shape[0]
    n_x, n_y = cost.shape
    k = cp.Variable((n_x, n_y), nonneg=True)
    p_sy = p_sx @ k
    p_y = cp.sum(p_sy, axis=0)
    p_s = p_sx.sum(axis=1)
    outer = cp.reshape(p_s, (n_s, 1), order="C") @ cp.reshape(p_y, (1, n_y), order="C")
    problem = cp.Problem(
        cp.Minimize(cp.sum(cp.rel_entr(p_sy, outer))),
        [cp.sum(k, axis=1) == 1, cp.sum(cp.multiply(cost, k)) <= budget],
    )
    try:
        with warnings.catch_warnings():  # "inaccurate" notices: the certificate decides
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=solver or cp.CLARABEL)
    except cp.error.SolverError as exc:
        raise PrivwatchError(f"the convex solver failed: {exc}") from None
    if k.value is None:
        raise PrivwatchError(f"the convex solver failed: status {problem.status}")
    out = np.clip(np.asarray(k.value, dtype=np.float64), 0.0, None)
    return np.asarray(out / out.sum(axis=1, keepdims=True), dtype=np.float64)


def _within_budget(
    k: NDArray[np.float64], cost: NDArray[np.float64], budget: float, cheapest: float
) -> NDArray[np.float64]:
    """The solver may overshoot the budget by its tolerance: pull back towards the cheapest
    channel along the segment between them (both row-stochastic)."""
    spent = float((cost * k).sum())
    if spent <= budget:
        return k
    cheap = np.zeros_like(k)
    cheap[np.arange(len(k)), cost.argmin(axis=1)] = 1.0
    t = (spent - budget) / max(spent - cheapest, 1e-300)
    return np.asarray((1 - t) * k + t * cheap, dtype=np.float64)
