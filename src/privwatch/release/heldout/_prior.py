"""The empirical-Bayes model behind the held-out check: each tuple's p(s | x).

Notation: for one sensitive value (or one projected value of several sensitive attributes) and
one observed tuple x with n_x records of which k_x hold the value, the tuple's share is

.. math:: \\operatorname{logit} \\theta_x = \\eta_x + r_x, \\qquad r_x \\sim G,

where eta_x is a ridge-penalised main-effects logistic fit on the observed columns (tuples
sharing values share effects; ``ridge = inf``: no main effects, eta = logit p) and G, the spread
of the tuples around it, is a log-spline density of the residual log-odds (Efron's g-modelling,
Efron 2016): ``df`` cubic B-splines on [-SPAN, SPAN], a ridge ``penalty`` on their
coefficients, fitted by penalised maximum marginal likelihood on GRID.

**G depends on the tuple's size.** Where a tuple's precision predicts its share (Chen 2023,
"Empirical Bayes when estimation precision predicts parameters"), one G for all tuples is
wrong for the small ones: in a real table rare tuples are often nearly pure, or carry a planted
rare value, while the large ones sit near the main effects. The watchdogs keep or exempt tuples
*by* their counts, and the search releases small cells, so the figure rests on exactly the
tuples a pooled G misjudges. Each size stratum s (:data:`STRATA`: 1, 2-3, 4-15 and 16 or more
records) has its own G_s, fitted on its tuples with the smooth family's ridge on
alpha_s - alpha_pooled (:data:`STRATUM_PENALTY`; it stays at the pooled G where its tuples say
little):
r_x ~ G_{s(n_x)}. A :class:`Candidate` is
one (ridge, df, penalty); :data:`PRIOR_CANDIDATES` are a smooth and a rough prior for each
ridge (the held-out check chooses among them by cross-fitted predictive score, :mod:`._model`).

The tuples' posteriors under a fitted prior are formed in :mod:`._posterior`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.interpolate import BSpline
from scipy.sparse import csr_matrix
from scipy.special import expit, log_expit, logit

from ._bfgs import minimize_bfgs

__all__ = [
    "PRIOR_CANDIDATES",
    "Candidate",
    "Fitted",
    "bootstrap_weights",
    "fit_candidate",
    "refit_alpha",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Grid of the residual log-odds r (the support of G; spacing 0.1).
GRID = np.linspace(-9.0, 9.0, 181)
STEP = float(GRID[1] - GRID[0])
#: Half-width of the spline's span (log-odds): beyond it the log-density is constant.
SPAN = 6.0
#: Fine grid on which the log-density's slope and curvature are tabulated (Laplace route).
FINE = np.linspace(-9.0, 9.0, 3601)
#: eta is rounded to this step when tuples share a posterior computation ...
ETA_STEP = 0.01
#: ... and to this one (half the grid's spacing) when they share a row of the prior's fit.
FIT_ETA_STEP = 0.05
#: Gradient tolerance of the prior's fit (log-likelihood per tuple).
GTOL = 1e-4
#: Most tuples the main effects are fitted on, and the prior G (random subsets beyond).
MAX_EFFECT_TUPLES = 50_000
MAX_FIT_TUPLES = 5_000
#: Upper ends (records) of the tuples' size strata, each with its own G (the last one open).
STRATA = (1, 3, 15)


@dataclass(frozen=True)
class Candidate:
    """One prior family: the main effects' ridge (inf: none), the spline's basis count and the
    penalty on its coefficients (small: a rough prior that can follow sharp features)."""

    ridge: float
    df: int
    penalty: float


#: Smooth and rough priors, each with strong, weak and no main effects.
PRIOR_CANDIDATES = tuple(
    Candidate(r, d, p) for r in (3.0, 30.0, np.inf) for d, p in ((14, 1.0), (30, 0.01))
)
#: Ridge on a size stratum's coefficients about the pooled G's: the smooth family's, whatever
#: the candidate (a stratum has fewer tuples than the pool; with the rough family's weak ridge
#: a stratum of small tuples that show no record of a rare value drifts to a G far below it).
STRATUM_PENALTY = max(c.penalty for c in PRIOR_CANDIDATES)


@dataclass(frozen=True)
class Fitted:
    """A candidate fitted to counts: eta per tuple row, the spline coefficients (``alpha[0]``
    the pooled G, ``alpha[1 + s]`` the G of size stratum s), and the distinct likelihood rows
    (with their multiplicities, size strata and rounded eta) they were fitted on."""

    candidate: Candidate
    eta: FloatArray
    alpha: FloatArray
    lik: FloatArray
    mult: FloatArray
    stratum: IntArray
    row_eta: FloatArray


def stratum_of(n: FloatArray) -> IntArray:
    """The size stratum of tuples of ``n`` records (:data:`STRATA`)."""
    return np.asarray(np.searchsorted(np.asarray(STRATA), n, side="left"), dtype=np.int64)


def _fit_strata(
    lik: FloatArray,
    w: FloatArray,
    stratum: IntArray,
    candidate: Candidate,
    start: FloatArray | None = None,
) -> FloatArray:
    """The pooled G, then each size stratum's G penalised towards it (STRATUM_PENALTY on
    alpha_s - alpha_pooled): rows (1 + strata) x df, as :attr:`Fitted.alpha`."""
    df, penalty = candidate.df, candidate.penalty
    pooled = _fit_alpha(lik, w, df, penalty, None if start is None else start[0])
    out = [pooled]
    for s in range(len(STRATA) + 1):
        sel = stratum == s
        if not sel.any() or float(w[sel].sum()) <= 0:
            out.append(pooled)
            continue
        first = pooled if start is None else start[1 + s]
        out.append(_fit_alpha(lik[sel], w[sel], df, STRATUM_PENALTY, first, centre=pooled))
    return np.stack(out)


def _columns(codes: IntArray, sizes: IntArray) -> IntArray:
    """Index of each (row, column) value's coefficient (after the intercept)."""
    offsets = np.concatenate([[1], 1 + np.cumsum(sizes)[:-1]])
    return np.asarray(codes + offsets, dtype=np.int64)


def main_effects(
    k: FloatArray, n: FloatArray, codes: IntArray, sizes: IntArray, p: float, ridge: float
) -> FloatArray:
    """Coefficients (intercept, then one per column value) of the ridge-penalised main-effects
    logistic fit of k successes in n (Newton-Raphson, sparse one-hot design); the intercept
    alone (logit p) without main effects."""
    q = int(sizes.sum()) + 1
    beta = np.zeros(q)
    beta[0] = float(logit(np.clip(p, 1e-12, 1 - 1e-12)))
    if np.isinf(ridge) or codes.shape[1] == 0 or len(k) == 0:
        return beta
    m = codes.shape[0]
    idx = np.concatenate([np.zeros((m, 1), dtype=np.int64), _columns(codes, sizes)], axis=1)
    starts = np.arange(0, idx.size + 1, idx.shape[1])
    design = csr_matrix((np.ones(idx.size), idx.ravel(), starts), shape=(m, q))
    information = _Information(idx, q)
    penalty = np.full(q, ridge)
    penalty[0] = 0.0

    def objective(b: FloatArray) -> float:
        eta = design @ b
        ll = k * log_expit(eta) + (n - k) * log_expit(-eta)
        return float(ll.sum() - 0.5 * (penalty * b**2).sum())

    value = objective(beta)
    for _ in range(50):
        mu = expit(design @ beta)
        grad = design.T @ (k - n * mu) - penalty * beta
        hess = information(n * mu * (1 - mu)) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        t, new = 1.0, value
        while t > 1e-6:
            new = objective(beta + t * step)
            if new >= value - 1e-12:
                break
            t /= 2
        beta, gain, value = beta + t * step, new - value, new
        if abs(gain) < 1e-8 * max(1.0, abs(value)):
            break
    return beta


class _Information:
    """X' W X of a one-hot main-effects design X (rows: the intercept's column 0, then one
    column per observed column's value, ascending: ``idx``), for weights W = diag(w).

    Entry (a, b) is the sum of w over the rows holding both columns, added in the rows'
    order: the same floats as the sparse product ``(X.T @ diags(w) @ X).toarray()``, at a
    tenth of its cost. Each row's pairs (0, 0) and (a < b) are one sparse row of a fixed
    pattern (built once per design), summed by one sparse product per call; a diagonal entry
    (b, b) is the sum over the rows holding b, that is entry (0, b), and the matrix is
    symmetric."""

    def __init__(self, idx: IntArray, q: int) -> None:
        m, c = idx.shape
        i, j = np.triu_indices(c, 1)
        i, j = np.concatenate([[0], i]), np.concatenate([[0], j])
        small = q * q < 2**31 and idx.size * len(i) < 2**31  # int32 indices: half the bytes
        code: NDArray[np.signedinteger[Any]] = idx.astype(np.int32 if small else np.int64)
        flat = (code[:, i] * q + code[:, j]).ravel()
        starts = np.arange(0, flat.size + 1, len(i), dtype=code.dtype)
        self.pairs = csr_matrix((np.ones(flat.size), flat, starts), shape=(m, q * q))
        self.q = q

    def __call__(self, w: FloatArray) -> FloatArray:
        upper = np.asarray(self.pairs.T @ w, dtype=float).reshape(self.q, self.q)
        out: FloatArray = upper + upper.T
        np.fill_diagonal(out, upper[0])  # (0, 0), then (b, b) = (0, b)
        return out


def _raw_basis(r: FloatArray, df: int) -> FloatArray:
    knots = np.linspace(-SPAN, SPAN, df - 2)
    t = np.concatenate([[knots[0]] * 3, knots, [knots[-1]] * 3])
    x = np.clip(r, -SPAN, SPAN - 1e-9)
    return np.asarray(BSpline.design_matrix(x, t, 3).toarray(), dtype=float)


_BASES: dict[tuple[int, int], FloatArray] = {}


def basis(df: int, fine: bool = False) -> FloatArray:
    """The spline basis on GRID (or _FINE), centred and scaled by its values on GRID."""
    key = (df, int(fine))
    if key not in _BASES:
        q = _raw_basis(GRID, df)
        mu, sd = q.mean(0), np.maximum(q.std(0), 1e-12)
        _BASES[key] = (_raw_basis(FINE if fine else GRID, df) - mu) / sd
    return _BASES[key]


def log_prior(alpha: FloatArray) -> FloatArray:
    """log G on GRID (normalised to sum 1 over GRID) for spline coefficients ``alpha``."""
    z = basis(len(alpha)) @ alpha
    z -= z.max()
    return np.asarray(z - np.log(np.exp(z).sum()), dtype=float)


def _fit_alpha(
    lik: FloatArray,
    w: FloatArray,
    df: int,
    penalty: float,
    start: FloatArray | None = None,
    centre: FloatArray | None = None,
) -> FloatArray:
    """Penalised ML of the log-spline prior: maximise sum_x w_x log(L_x . G(alpha))
    - penalty |alpha - centre|^2 / 2 (``centre`` 0: the flat G), w_x the tuples sharing a
    likelihood row (BFGS on the objective per tuple, to a gradient of GTOL: :mod:`._bfgs`)."""
    q = basis(df)
    c0 = np.zeros(df) if centre is None else centre
    total = max(float(w.sum()), 1e-12)
    w = w / total
    pen = penalty / total

    def objective(alpha: FloatArray) -> tuple[float, FloatArray]:
        g = np.exp(log_prior(alpha))
        m = np.maximum(lik @ g, 1e-300)
        post_w = (lik.T @ (w / m)) * g  # sum_x w_x posterior_x on the grid
        d = alpha - c0
        grad = (post_w - g) @ q - pen * d
        return -(float(w @ np.log(m)) - 0.5 * pen * float(d @ d)), -grad

    x0 = c0.copy() if start is None else start
    return minimize_bfgs(objective, x0, GTOL, 300)


def distinct(
    k: FloatArray, n: FloatArray, eta: FloatArray, step: float = ETA_STEP
) -> tuple[IntArray, IntArray]:
    """Index of one representative row per distinct (k, n, eta rounded to ``step``), and the
    representative of every row (``np.unique(axis=0)``'s lexicographic order and first
    occurrences, from a stable lexsort: the same arrays, without its slow row comparisons)."""
    e = np.round(eta / step)
    order = np.lexsort((e, n, k))
    ks, ns, es = k[order], n[order], e[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = (ks[1:] != ks[:-1]) | (ns[1:] != ns[:-1]) | (es[1:] != es[:-1])
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.cumsum(start) - 1
    return order[start].astype(np.int64), inverse


def grid_log_likelihood(k: FloatArray, n: FloatArray, eta: FloatArray) -> FloatArray:
    """Binomial log-likelihood of each row's counts (``k`` of ``n``) at every grid point, the
    share there being expit(eta + GRID) (rows x GRID):
    k log expit(eta + r) + (n - k) log expit(-(eta + r)).

    The log expit terms depend on eta alone, and the rows share few distinct eta (rounded to a
    step by every caller): they are computed once per distinct eta and gathered (elementwise,
    the same values as computed per row)."""
    e, inverse = np.unique(eta, return_inverse=True)
    z = e[:, None] + GRID[None, :]
    ll: FloatArray = np.take(log_expit(z), inverse, axis=0)
    ll *= k[:, None]
    down = np.take(log_expit(-z), inverse, axis=0)
    down *= (n - k)[:, None]
    ll += down  # in place: the same products and sum, fewer temporaries
    return ll


def _likelihood(k: FloatArray, n: FloatArray, eta: FloatArray) -> FloatArray:
    """Binomial likelihood of each row's counts at every grid point, scaled to max 1 per row."""
    ll = grid_log_likelihood(k, n, eta)
    ll -= ll.max(1, keepdims=True)
    return np.exp(ll, out=ll)


def fit_candidate(
    candidate: Candidate,
    k: FloatArray,
    n: FloatArray,
    codes: IntArray,
    p: float,
    rng: np.random.Generator,
    eta: FloatArray | None = None,
    start: FloatArray | None = None,
) -> Fitted:
    """Fit eta (unless given: the main effects of the same ridge) and G of one value on the
    tuples with records."""
    seen = np.flatnonzero(n > 0)
    if eta is None:
        eta = _eta(candidate.ridge, k, n, codes, p, seen, rng)
    rows = seen
    if len(rows) > MAX_FIT_TUPLES:
        rows = np.sort(rng.choice(rows, MAX_FIT_TUPLES, replace=False))
    first, inverse = distinct(k[rows], n[rows], eta[rows], FIT_ETA_STEP)
    mult = np.bincount(inverse, minlength=len(first)).astype(float)
    r = rows[first]
    row_eta = np.round(eta[r] / FIT_ETA_STEP) * FIT_ETA_STEP
    lik = _likelihood(k[r], n[r], row_eta)
    stratum = stratum_of(n[r])
    alpha = _fit_strata(lik, mult, stratum, candidate, start)
    return Fitted(candidate, eta, alpha, lik, mult, stratum, row_eta)


def _eta(
    ridge: float,
    k: FloatArray,
    n: FloatArray,
    codes: IntArray,
    p: float,
    seen: IntArray,
    rng: np.random.Generator,
) -> FloatArray:
    """eta of every tuple row: the main effects fitted on (at most MAX_EFFECT_TUPLES of) the
    tuples with records."""
    sizes = codes.max(0) + 1 if codes.size else np.zeros(0, dtype=np.int64)
    rows = seen
    if len(rows) > MAX_EFFECT_TUPLES:
        rows = np.sort(rng.choice(rows, MAX_EFFECT_TUPLES, replace=False))
    beta = main_effects(k[rows], n[rows], codes[rows], sizes, p, ridge)
    if codes.size and not np.isinf(ridge):
        return np.asarray(beta[0] + beta[_columns(codes, sizes)].sum(1), dtype=float)
    return np.full(len(k), beta[0])


def bootstrap_weights(fitted: Fitted, rng: np.random.Generator) -> FloatArray:
    """Bayesian-bootstrap weights of the tuples: a Gamma(multiplicity) weight per distinct
    likelihood row of the fit."""
    return np.asarray(rng.gamma(fitted.mult), dtype=float)


def refit_alpha(fitted: Fitted, weights: FloatArray) -> FloatArray:
    """A draw of G (its coefficients): refitted with the tuples' :func:`bootstrap_weights`,
    from the fit."""
    return _fit_strata(fitted.lik, weights, fitted.stratum, fitted.candidate, start=fitted.alpha)
