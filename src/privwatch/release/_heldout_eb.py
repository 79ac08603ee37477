"""The empirical-Bayes model behind the held-out check: each tuple's p(s | x), and a cell's.

Notation: for one sensitive value (or one projected value of several sensitive attributes) and
one observed tuple x with n_x records of which k_x hold the value, the tuple's share is

.. math:: \\operatorname{logit} \\theta_x = \\eta_x + r_x, \\qquad r_x \\sim G,

where eta_x is a ridge-penalised main-effects logistic fit on the observed columns (the tuple's
"neighbourhood": tuples sharing values share effects) and G, the spread of the tuples around it,
is a nonparametric prior on a grid of log-odds (Kiefer-Wolfowitz NPMLE, fitted by EM). The prior
is fitted on every tuple of the data, which the search did not select, so the posterior of any
released cell is free of the search's winner's curse: a cell is chosen because its counts look
safe, and its posterior, given the right prior, accounts for that. A released cell is the
mixture of its tuples, theta_c = sum_x n_x theta_x / n_c; the tuples' posteriors are independent
given the prior, so the cell's posterior has their weighted mean and variance, which a Beta
distribution matches (one-tuple cells use the tuple's grid posterior exactly).

The ridge penalty (3, 30, or no main effects at all) is chosen by cross-fitting: per fold the
model is fitted on the other folds, and the held-out counts of the cells of the release fitted
on those folds are scored under the cells' Beta predictive (beta-binomial); the penalty with the
best held-out score is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.interpolate import BSpline
from scipy.optimize import minimize
from scipy.sparse import csr_matrix, diags
from scipy.special import betainc, betaln, expit, log_expit, logit

__all__ = ["TupleModel", "beta_of_cells", "cell_breach", "fit_tuple_model", "heldout_score"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Coarse grid of the residual log-odds r (the support of the prior G) ...
GRID = np.linspace(-9.0, 9.0, 121)
#: ... refined to this spacing where a tuple's share can cross the box's edges.
FINE = 0.02
#: Ridge penalties tried for the main effects (inf: no main effects, eta = logit p).
RIDGES = (3.0, 30.0, np.inf)
#: Log-spline prior: basis functions, half-width of their span (log-odds), ridge on the
#: coefficients (Efron's g-modelling; the span covers shares from p e^-6 to p e^6).
SPLINE_DF = 14
SPAN = 6.0
PENALTY = 1.0
#: Most tuples the prior G is fitted on (a random subset beyond it).
MAX_FIT_TUPLES = 5_000
#: Tuples per block when the grid posteriors are formed (memory: 121 floats per tuple).
BLOCK = 50_000


@dataclass(frozen=True)
class TupleModel:
    """The fitted prior of one sensitive value: main effects and the residual weights."""

    eta: FloatArray  # per tuple row (all rows of the count table)
    grid: FloatArray  # residual log-odds
    weights: FloatArray  # prior weights of ``grid``
    ridge: float
    basis: FloatArray  # log-spline basis on ``grid``
    alpha: FloatArray  # its coefficients
    lik: FloatArray  # the likelihood rows it was fitted on (distinct tuples) ...
    mult: FloatArray  # ... and how many tuples share each


def residual_grid(eta: FloatArray, bounds: tuple[float, float]) -> FloatArray:
    """GRID plus a band of spacing FINE around each box edge, for the range of eta: the
    posterior mass beyond an edge is only as exact as the grid is fine there."""
    parts = [GRID]
    if len(eta):
        for edge in bounds:
            if 0.0 < edge < 1.0:
                e = float(logit(edge))
                lo, hi = e - float(eta.max()) - 0.4, e - float(eta.min()) + 0.4
                parts.append(np.arange(lo, hi + FINE, FINE))
    return np.unique(np.concatenate(parts))


def _main_effects(
    k: FloatArray, n: FloatArray, codes: IntArray, p: float, ridge: float
) -> FloatArray:
    """eta per tuple: intercept + one coefficient per (column, value), ridge-penalised
    (Newton-Raphson on the penalised binomial log-likelihood, a sparse one-hot design)."""
    base = float(logit(np.clip(p, 1e-12, 1 - 1e-12)))
    if np.isinf(ridge) or codes.shape[1] == 0 or len(k) == 0:
        return np.full(len(k), base)
    sizes = codes.max(0) + 1
    flat = codes + np.concatenate([[1], 1 + np.cumsum(sizes)[:-1]])  # column 0: intercept
    m, q = codes.shape[0], int(sizes.sum()) + 1
    idx = np.concatenate([np.zeros((m, 1), dtype=np.int64), flat], axis=1)
    design = csr_matrix(
        (np.ones(idx.size), (np.repeat(np.arange(m), idx.shape[1]), idx.ravel())), shape=(m, q)
    )
    penalty = np.full(q, ridge)
    penalty[0] = 0.0
    beta = np.zeros(q)
    beta[0] = base

    def objective(b: FloatArray) -> float:
        eta = design @ b
        ll = k * log_expit(eta) + (n - k) * log_expit(-eta)
        return float(ll.sum() - 0.5 * (penalty * b**2).sum())

    value = objective(beta)
    for _ in range(50):
        eta = design @ beta
        mu = expit(eta)
        grad = design.T @ (k - n * mu) - penalty * beta
        hess = (design.T @ diags(n * mu * (1 - mu)) @ design).toarray() + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-6:
            new = objective(beta + t * step)
            if new >= value - 1e-12:
                break
            t /= 2
        beta, gain, value = beta + t * step, new - value, new
        if abs(gain) < 1e-8 * max(1.0, abs(value)):
            break
    return np.asarray(design @ beta, dtype=float)


def _likelihood(k: FloatArray, n: FloatArray, eta: FloatArray, grid: FloatArray) -> FloatArray:
    """Binomial likelihood of each tuple's counts at every grid point, scaled to max 1 per row."""
    z = eta[:, None] + grid[None, :]
    ll = k[:, None] * log_expit(z) + (n - k)[:, None] * log_expit(-z)
    ll -= ll.max(1, keepdims=True)
    return np.asarray(np.exp(ll), dtype=float)


def _basis(grid: FloatArray) -> FloatArray:
    """Cubic B-spline basis in the residual log-odds (SPLINE_DF functions on [-SPAN, SPAN],
    constant beyond), centred and scaled per column: the log-density of the prior G."""
    knots = np.linspace(-SPAN, SPAN, SPLINE_DF - 2)
    t = np.concatenate([[knots[0]] * 3, knots, [knots[-1]] * 3])
    x = np.clip(grid, -SPAN, SPAN - 1e-9)
    q = BSpline.design_matrix(x, t, 3).toarray()
    q -= q.mean(0)
    return np.asarray(q / np.maximum(q.std(0), 1e-12), dtype=float)


def _prior(q: FloatArray, alpha: FloatArray) -> FloatArray:
    z = q @ alpha
    g = np.exp(z - z.max())
    return np.asarray(g / g.sum(), dtype=float)


def _fit_alpha(
    lik: FloatArray, w: FloatArray, q: FloatArray, start: FloatArray | None = None
) -> FloatArray:
    """Penalised ML of the log-spline prior (Efron 2016): maximise sum_x w_x log(L_x . G(alpha))
    - PENALTY |alpha|^2 / 2, w_x the tuples sharing a likelihood row."""

    def objective(alpha: FloatArray) -> tuple[float, FloatArray]:
        g = _prior(q, alpha)
        m = lik @ g
        post = lik * (g / m[:, None])
        grad = (w @ post - w.sum() * g) @ q - PENALTY * alpha
        return -(float(w @ np.log(m)) - 0.5 * PENALTY * float(alpha @ alpha)), -grad

    x0 = np.zeros(q.shape[1]) if start is None else start
    res = minimize(objective, x0, jac=True, method="BFGS")
    return np.asarray(res.x, dtype=float)


def fit_tuple_model(
    k: FloatArray,
    n: FloatArray,
    codes: IntArray,
    p: float,
    ridge: float,
    bounds: tuple[float, float],
    rng: np.random.Generator,
) -> TupleModel:
    """Fit eta (main effects) and the prior G of one value on the tuples with records."""
    seen = n > 0
    eta = np.full(len(k), float(logit(np.clip(p, 1e-12, 1 - 1e-12))))
    eta[seen] = _main_effects(k[seen], n[seen], codes[seen], p, ridge)
    rows = np.flatnonzero(seen)
    if len(rows) > MAX_FIT_TUPLES:
        rows = np.sort(rng.choice(rows, MAX_FIT_TUPLES, replace=False))
    grid = residual_grid(eta[seen], bounds)
    q = _basis(grid)
    # tuples with the same counts and centre share a likelihood row (no main effects: most)
    _, first, mult = np.unique(
        np.stack([k[rows], n[rows], eta[rows]], axis=1),
        axis=0,
        return_index=True,
        return_counts=True,
    )
    rows = rows[first]
    lik = _likelihood(k[rows], n[rows], eta[rows], grid)
    alpha = _fit_alpha(lik, mult.astype(float), q)
    return TupleModel(eta, grid, _prior(q, alpha), ridge, q, alpha, lik, mult.astype(float))


def draw_weights(model: TupleModel, rng: np.random.Generator) -> FloatArray:
    """A draw of the prior G: refitted with Bayesian-bootstrap weights of the tuples (a
    Gamma(multiplicity) weight per distinct likelihood row)."""
    alpha = _fit_alpha(model.lik, rng.gamma(model.mult), model.basis, start=model.alpha)
    return _prior(model.basis, alpha)


def tuple_posteriors(
    model: TupleModel,
    weights: FloatArray,
    k: FloatArray,
    n: FloatArray,
    rows: IntArray,
    bounds: tuple[float, float],
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Posterior mean, variance and P(outside [lo, hi]) of theta for the tuple ``rows``."""
    lo, hi = bounds
    mean = np.empty(len(rows))
    var = np.empty(len(rows))
    out = np.empty(len(rows))
    for s in range(0, len(rows), BLOCK):
        r = rows[s : s + BLOCK]
        post = _likelihood(k[r], n[r], model.eta[r], model.grid) * weights
        post /= post.sum(1, keepdims=True)
        theta = expit(model.eta[r][:, None] + model.grid[None, :])
        m = (post * theta).sum(1)
        mean[s : s + BLOCK] = m
        var[s : s + BLOCK] = np.maximum((post * theta**2).sum(1) - m**2, 0.0)
        out[s : s + BLOCK] = (post * ((theta < lo) | (theta > hi))).sum(1)
    return mean, var, out


def beta_of_cells(
    mean: FloatArray,
    var: FloatArray,
    size: FloatArray,
    cell_of: IntArray,
    n_cells: int,
    extra: tuple[int, float, float] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Beta (a, b) matching each cell's posterior mean and variance, and the cell sizes.

    ``extra`` = (cell, mass, mean) adds a pseudo-tuple of known mean (the mass of tuples never
    seen, released in the suppressed cell)."""
    n_c = np.bincount(cell_of, weights=size, minlength=n_cells).astype(float)
    m_c = np.bincount(cell_of, weights=size * mean, minlength=n_cells)
    v_c = np.bincount(cell_of, weights=size**2 * var, minlength=n_cells)
    if extra is not None:
        c, mass, m_extra = extra
        n_c[c] += mass
        m_c[c] += mass * m_extra
    safe = np.maximum(n_c, 1e-300)
    m = np.clip(m_c / safe, 1e-12, 1 - 1e-12)
    v = np.clip(v_c / safe / safe, 1e-300, m * (1 - m) * (1 - 1e-9))
    phi = m * (1 - m) / v - 1.0
    return m * phi, (1 - m) * phi, n_c


def beta_outside(a: FloatArray, b: FloatArray, bounds: tuple[float, float]) -> FloatArray:
    """P(theta < lo or theta > hi) for theta ~ Beta(a, b)."""
    lo, hi = bounds
    below = betainc(a, b, lo) if lo > 0 else np.zeros_like(a)
    above = 1.0 - betainc(a, b, hi) if hi < 1 else np.zeros_like(a)
    return np.asarray(np.clip(below + above, 0.0, 1.0), dtype=float)


def cell_breach(
    model: TupleModel,
    weights: FloatArray,
    k: FloatArray,
    n: FloatArray,
    cell_of: IntArray,
    n_cells: int,
    bounds: tuple[float, float],
    unseen: tuple[int, float, float] | None,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per cell: P(share outside ``bounds``), the size (records; ``unseen`` = (cell, mass,
    mean) adds the mass of tuples never seen to its cell) and the Beta (a, b) of its share."""
    rows = np.flatnonzero(n > 0)
    mean, var, out = tuple_posteriors(model, weights, k, n, rows, bounds)
    a, b, size = beta_of_cells(mean, var, n[rows], cell_of[rows], n_cells, unseen)
    p = beta_outside(a, b, bounds)
    # a cell of one tuple (and no unseen mass): the tuple's grid posterior, exactly
    n_tuples = np.bincount(cell_of[rows], minlength=n_cells)
    first = np.full(n_cells, -1)
    first[cell_of[rows][::-1]] = np.arange(len(rows))[::-1]
    one = (n_tuples == 1) & (first >= 0)
    if unseen is not None and unseen[1] > 0:
        one[unseen[0]] = False
    p[one] = out[first[one]]
    return p, size, a, b


def unseen_mean(
    model: TupleModel, k: FloatArray, n: FloatArray, bounds: tuple[float, float]
) -> float:
    """Posterior mean share of the tuples seen once: the share assumed for tuples never seen."""
    rows = np.flatnonzero(np.isclose(n, 1.0))
    if len(rows) == 0:
        rows = np.flatnonzero(n > 0)
    mean, _, _ = tuple_posteriors(model, model.weights, k, n, rows, bounds)
    return float(mean.mean()) if len(mean) else 0.5


def heldout_score(a: FloatArray, b: FloatArray, k: FloatArray, n: FloatArray) -> float:
    """Beta-binomial log predictive of held-out counts (k of n) under Beta(a, b) per cell."""
    ok = n > 0
    return float((betaln(a[ok] + k[ok], b[ok] + n[ok] - k[ok]) - betaln(a[ok], b[ok])).sum())
