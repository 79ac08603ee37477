"""The tuples' posteriors under one or several fitted priors G (:mod:`._prior`).

A tuple's posterior of its residual log-odds r is L(r) G(r), L its binomial likelihood. Two
routes:

- **grid** (few records: Fisher information n theta (1 - theta) at most LAPLACE_INFO): on GRID;
  tuples with the same (k, n) and eta within ETA_STEP share one row, and the posterior moments
  under R priors at once are matrix products of the row's L, L theta and L theta^2 with the
  (grid x R) matrix of the priors, so R replicates cost about one. The mass beyond a box edge
  is integrated with each grid point's mass spread uniformly over its cell (it moves smoothly
  with the edge).
- **Laplace** (many records: the likelihood is narrower than the prior's features): a normal
  posterior around the estimate, moved by one Newton step with the log-prior's slope and
  curvature; where the prior's curvature dominates (a sharp prior feature), the grid route.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, logit, ndtr

from ._prior import (
    ETA_STEP,
    FINE,
    GRID,
    STEP,
    _likelihood,
    basis,
    distinct,
    log_prior,
    stratum_of,
)

__all__ = ["LAPLACE_INFO", "GridRows", "posteriors"]

FloatArray = NDArray[np.float64]
Bounds = tuple[float, float]
#: Tuples whose Fisher information exceeds this get the Laplace posterior.
LAPLACE_INFO = 60.0
#: Distinct rows per block of grid posteriors (memory: a few GRID-long rows each).
BLOCK = 8_000
#: Most memory a :class:`GridRows` keeps (two GRID-long float rows per (k, n, eta) row).
GRID_ROWS_BYTES = 64 * 2**20


#: Log-odds of an absent box edge (a share of 0 or 1): far beyond every grid point.
_FAR = 1e9


def _edges(bounds: Bounds) -> tuple[float, float]:
    """The box edges in log-odds (an absent edge, 0 or 1, far beyond every grid point)."""
    lo, hi = bounds
    return (float(logit(lo)) if lo > 0 else -_FAR, float(logit(hi)) if hi < 1 else _FAR)


def _likelihood_rows(
    k: FloatArray, n: FloatArray, eta: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Each row's binomial likelihood on GRID, scaled to a maximum of 1
    (:func:`~._prior._likelihood`), and theta on GRID (rows x GRID; elementwise and per row: a
    row's values do not depend on the other rows)."""
    return _likelihood(k, n, eta), expit(eta[:, None] + GRID[None, :])


class GridRows:
    """The likelihood rows of :func:`_likelihood_rows`, kept per (k, n, eta) for reuse.

    The held-out checks of one table ask for the posteriors of the same tuples under many
    priors and boxes (every release, replicate and margin: on a census-sized table 430,000
    grid rows asked, 9,000 distinct); the rows depend on (k, n, eta) only, so they are
    computed once. Lookups give the same bits as computing them again (elementwise values;
    the products with the priors are formed on the same rows in the same order). At most
    ``budget`` bytes are kept; rows beyond it are computed each time. Thread-safe."""

    def __init__(self, budget: int = GRID_ROWS_BYTES) -> None:
        self._cap = max(int(budget) // (2 * GRID.size * 8), 0)
        self._slot: dict[tuple[float, float, float], int] = {}
        self._lik = np.empty((0, GRID.size))
        self._theta = np.empty((0, GRID.size))
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._slot)

    def rows(self, k: FloatArray, n: FloatArray, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """:func:`_likelihood_rows` of the rows, from the kept rows where known."""
        keys = list(zip(k.tolist(), n.tolist(), eta.tolist(), strict=True))
        with self._lock:
            idx = np.fromiter((self._slot.get(t, -1) for t in keys), np.int64, len(keys))
            miss = np.flatnonzero(idx < 0)
            if len(miss) == 0:
                return self._lik[idx], self._theta[idx]
            lik_m, theta_m = _likelihood_rows(k[miss], n[miss], eta[miss])
            room = min(len(miss), self._cap - len(self._slot))
            if room > 0:
                start = len(self._slot)
                self._grow(start + room)
                self._lik[start : start + room] = lik_m[:room]
                self._theta[start : start + room] = theta_m[:room]
                for j in range(room):
                    self._slot.setdefault(keys[miss[j]], start + j)
            lik = np.empty((len(keys), GRID.size))
            theta = np.empty((len(keys), GRID.size))
            hit = idx >= 0
            lik[hit], theta[hit] = self._lik[idx[hit]], self._theta[idx[hit]]
            lik[miss], theta[miss] = lik_m, theta_m
            return lik, theta

    def _grow(self, size: int) -> None:
        """Room for ``size`` rows (doubling, at most the cap)."""
        if size <= len(self._lik):
            return
        new = min(max(size, 2 * len(self._lik), 1024), self._cap)
        for name in ("_lik", "_theta"):
            old = getattr(self, name)
            grown = np.empty((new, GRID.size))
            grown[: len(old)] = old
            setattr(self, name, grown)


def _grid(
    alphas: FloatArray,
    k: FloatArray,
    n: FloatArray,
    eta: FloatArray,
    bounds: Sequence[Bounds],
    kept: GridRows | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Mean, variance and mass outside the edges of theta on GRID (rows x priors)."""
    g = np.stack([np.exp(log_prior(a)) for a in alphas], axis=1)  # grid x R
    edges = [_edges(b) for b in bounds]
    shape = (len(k), len(alphas))
    mean, var, out = np.empty(shape), np.empty(shape), np.empty(shape)
    for s in range(0, len(k), BLOCK):
        sl = slice(s, s + BLOCK)
        if kept is None:
            lik, theta = _likelihood_rows(k[sl], n[sl], eta[sl])
        else:
            lik, theta = kept.rows(k[sl], n[sl], eta[sl])
        lt = lik * theta
        norm = lik @ g
        m = (lt @ g) / norm
        mean[sl], var[sl] = m, np.maximum(((lt * theta) @ g) / norm - m**2, 0.0)
        for r, (lo, hi) in enumerate(edges):
            # an absent edge (far beyond the grid) adds exactly 0 mass: skipped, same figures
            if lo <= -_FAR and hi >= _FAR:
                out[sl, r] = 0.0
                continue
            # an absent edge's mass is exactly +0.0: added as a constant, not computed
            below = (
                np.clip((lo - eta[sl, None] - (GRID - STEP / 2)) / STEP, 0.0, 1.0)
                if lo > -_FAR
                else 0.0
            )
            above = (
                np.clip(((GRID + STEP / 2) - (hi - eta[sl, None])) / STEP, 0.0, 1.0)
                if hi < _FAR
                else 0.0
            )
            out[sl, r] = ((lik * (below + above)) @ g[:, r]) / norm[:, r]
    return mean, var, out


def _laplace(
    alphas: FloatArray, k: FloatArray, n: FloatArray, eta: FloatArray, bounds: Sequence[Bounds]
) -> tuple[FloatArray, FloatArray, FloatArray, np.ndarray]:
    """Laplace posteriors (rows x priors), and where they are trusted for every prior."""
    est = (k + 0.5) / (n + 1.0)
    info = n * est * (1 - est)
    r0 = logit(est) - eta
    shape = (len(k), len(alphas))
    mean, var, out = np.empty(shape), np.empty(shape), np.empty(shape)
    ok = np.ones(len(k), dtype=bool)
    for j, (alpha, b) in enumerate(zip(alphas, bounds, strict=True)):
        z = basis(len(alpha), fine=True) @ alpha
        d1 = np.gradient(z, FINE)
        curv = info - np.interp(r0, FINE, np.gradient(d1, FINE))
        ok &= curv > 0.5 * info
        curv = np.maximum(curv, 0.5 * info)
        r = r0 + np.interp(r0, FINE, d1) / curv
        th = expit(eta + r)
        s = th * (1 - th)
        mean[:, j] = th + 0.5 * s * (1 - 2 * th) / curv
        var[:, j] = s**2 / curv
        lo, hi = _edges(b)
        sd = np.sqrt(1.0 / curv)
        out[:, j] = ndtr((lo - eta - r) / sd) + ndtr((eta + r - hi) / sd)
    return mean, var, out, ok


def posteriors(
    alphas: FloatArray,
    k: FloatArray,
    n: FloatArray,
    eta: FloatArray,
    bounds: Sequence[Bounds],
    kept: GridRows | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Posterior mean, variance and P(theta outside ``bounds[r]``) of each row's share under
    each prior ``alphas[r]`` (rows x priors each). A prior is the spline coefficients of its
    G per size stratum (:attr:`~._prior.Fitted.alpha`: the pooled G, then one per stratum);
    a row's posterior is formed under the G of its stratum (:func:`~._prior.stratum_of`).
    ``kept``: likelihood rows kept for reuse (:class:`GridRows`; the same figures)."""
    alphas = alphas[None] if alphas.ndim == 2 else alphas
    shape = (len(k), len(alphas))
    mean, var, out = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    stratum = stratum_of(n)
    for s in np.unique(stratum).tolist():
        idx = np.flatnonzero(stratum == s)
        m, v, o = _pooled(alphas[:, 1 + s], k[idx], n[idx], eta[idx], bounds, kept)
        mean[idx], var[idx], out[idx] = m, v, o
    return mean, var, out


def _pooled(
    alphas: FloatArray,
    k: FloatArray,
    n: FloatArray,
    eta: FloatArray,
    bounds: Sequence[Bounds],
    kept: GridRows | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`posteriors` under one G per prior (``alphas``: priors x df)."""
    shape = (len(k), len(alphas))
    mean, var, out = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    est = (k + 0.5) / (n + 1.0)
    big = n * est * (1 - est) > LAPLACE_INFO
    if big.any():
        idx = np.flatnonzero(big)
        m, v, o, ok = _laplace(alphas, k[idx], n[idx], eta[idx], bounds)
        mean[idx], var[idx], out[idx] = m, v, o
        big[idx[~ok]] = False
    small = np.flatnonzero(~big)
    if len(small):
        first, inverse = distinct(k[small], n[small], eta[small])
        r = small[first]
        eta_r = np.round(eta[r] / ETA_STEP) * ETA_STEP
        m, v, o = _grid(alphas, k[r], n[r], eta_r, bounds, kept)
        mean[small], var[small], out[small] = m[inverse], v[inverse], o[inverse]
    return mean, var, out
