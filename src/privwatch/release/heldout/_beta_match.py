"""The posterior share of a released cell as a Beta distribution (used by :mod:`._evaluation`).

A cell's share is the records-weighted mean of its tuples' shares; given the prior the tuples
are independent, so the cell's posterior has their weighted mean m and variance v, matched by a
Beta(a, b) with a = m phi, b = (1 - m) phi, phi = m (1 - m) / v - 1 (:func:`beta_of_cells`; all
replicates of a prior family in one pass: :func:`betas_of_cells`). The unseen mass joins the
suppressed cell as a pseudo-tuple whose share has the mean and the variance of the average share
of the tuples seen once (:func:`seen_once`, :func:`unseen_share`; Good-Turing). The chance that a
cell breaks the lift box is the Beta's mass outside it (:func:`beta_outside`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import betainc

__all__ = [
    "NEGLIGIBLE",
    "beta_of_cells",
    "beta_outside",
    "betas_of_cells",
    "seen_once",
    "unseen_share",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: A probability this small is 0 to its complement: 1.0 - p == 1.0 for p <= 2^-54 (a margin
#: of 4 for the bound's and the CDF's rounding).
NEGLIGIBLE = 2.0**-56


def beta_of_cells(
    mean: FloatArray,
    var: FloatArray,
    size: FloatArray,
    cell_of: IntArray,
    n_cells: int,
    extra: tuple[int, float, float, float] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Beta (a, b) matching each cell's posterior mean and variance, and the cell sizes.

    ``extra`` = (cell, mass, mean, var) adds a pseudo-tuple of that mass whose share has that
    posterior mean and variance (the mass of tuples never seen, released in the suppressed
    cell)."""
    # float sums even without rows: numpy's bincount of no rows is integer zeros even with
    # weights, and the unseen pseudo-tuple's sums added to them would be cast to integers
    n_c = np.bincount(cell_of, weights=size, minlength=n_cells).astype(float)
    m_c = np.bincount(cell_of, weights=size * mean, minlength=n_cells).astype(float)
    v_c = np.bincount(cell_of, weights=size**2 * var, minlength=n_cells).astype(float)
    if extra is not None:
        c, mass, m_extra, v_extra = extra
        n_c[c] += mass
        m_c[c] += mass * m_extra
        v_c[c] += mass**2 * v_extra
    safe = np.maximum(n_c, 1e-300)
    m = np.clip(m_c / safe, 1e-12, 1 - 1e-12)
    v = np.clip(v_c / safe / safe, 1e-300, m * (1 - m) * (1 - 1e-9))
    phi = m * (1 - m) / v - 1.0
    return m * phi, (1 - m) * phi, n_c


def betas_of_cells(
    mean: FloatArray,
    var: FloatArray,
    size: FloatArray,
    cell_of: IntArray,
    n_cells: int,
    extras: list[tuple[int, float, float, float]],
    cells: IntArray,
) -> tuple[FloatArray, FloatArray]:
    """:func:`beta_of_cells` of every column of ``mean`` and ``var`` (rows x replicates), the
    replicate ``i`` with ``extras[i]``, at the ``cells`` only (cells x replicates): one
    bincount of (cell, replicate) bins for all replicates, each bin's rows added in row order
    as in :func:`beta_of_cells`, and the same elementwise steps, so the same bits. Without
    rows, :func:`beta_of_cells` itself (only the unseen pseudo-tuple: no bins to add)."""
    n_rep = mean.shape[1]
    if not len(cell_of):
        pairs = [
            beta_of_cells(mean[:, i], var[:, i], size, cell_of, n_cells, extra)[:2]
            for i, extra in enumerate(extras)
        ]
        return np.stack([a[cells] for a, _ in pairs], 1), np.stack([b[cells] for _, b in pairs], 1)
    at = (cell_of[:, None] * n_rep + np.arange(n_rep)).ravel()

    def sums(weights: FloatArray) -> FloatArray:
        out = np.bincount(at, weights=weights.ravel(), minlength=n_cells * n_rep)
        return np.asarray(out.reshape(n_cells, n_rep), dtype=np.float64)

    n_c = np.bincount(cell_of, weights=size, minlength=n_cells).astype(float)
    m_c, v_c = sums(size[:, None] * mean), sums((size**2)[:, None] * var)
    n_c = np.repeat(n_c[:, None], n_rep, axis=1)
    for i, (c, mass, m_extra, v_extra) in enumerate(extras):
        n_c[c, i] += mass
        m_c[c, i] += mass * m_extra
        v_c[c, i] += mass**2 * v_extra
    n_c, m_c, v_c = n_c[cells], m_c[cells], v_c[cells]
    safe = np.maximum(n_c, 1e-300)
    m = np.clip(m_c / safe, 1e-12, 1 - 1e-12)
    v = np.clip(v_c / safe / safe, 1e-300, m * (1 - m) * (1 - 1e-9))
    phi = m * (1 - m) / v - 1.0
    return m * phi, (1 - m) * phi


def beta_outside(
    a: FloatArray, b: FloatArray, bounds: tuple[float, float], complement: bool = False
) -> FloatArray:
    """P(theta < lo or theta > hi) for theta ~ Beta(a, b).

    ``complement``: the caller uses only 1 - P. The Beta CDFs are then computed only where a
    tail bound leaves P above NEGLIGIBLE; elsewhere P is 0, and 1 - P is 1.0 exactly either
    way (the same result). The bound: Beta(a, b) is sub-Gaussian with variance proxy at most
    1 / (4 (a + b + 1)) (Marchal & Arbel, Electron. Commun. Probab. 2017), so
    P(theta - mean <= -t) and P(theta - mean >= t) are at most exp(-2 (a + b + 1) t^2)."""
    lo, hi = bounds
    if complement:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        mean, width = a / (a + b), 2.0 * (a + b + 1.0)
        with np.errstate(invalid="ignore", over="ignore"):
            tail = np.zeros_like(a)
            if lo > 0:
                tail += np.where(mean > lo, np.exp(-width * (mean - lo) ** 2), 1.0)
            if hi < 1:
                tail += np.where(mean < hi, np.exp(-width * (hi - mean) ** 2), 1.0)
        todo = ~(tail < NEGLIGIBLE)  # NaN: computed
        out = np.zeros_like(a)
        if todo.any():
            out[todo] = beta_outside(a[todo], b[todo], bounds)
        return out
    below = betainc(a, b, lo) if lo > 0 else np.zeros_like(a)
    above = 1.0 - betainc(a, b, hi) if hi < 1 else np.zeros_like(a)
    return np.asarray(np.clip(below + above, 0.0, 1.0), dtype=float)


def seen_once(n: FloatArray) -> IntArray:
    """The tuple rows whose share the unseen tuples' is taken from: those seen once
    (Good-Turing: the tuples never seen resemble them), else every tuple seen."""
    once = np.isclose(n, 1.0)
    return np.flatnonzero(once if once.any() else n > 0)


def unseen_share(mean: FloatArray, var: FloatArray) -> tuple[float, float]:
    """The unseen pseudo-tuple's share, from the posterior means and variances of the tuples
    :func:`seen_once`: the average of their means and the variance of their average,
    sum_x v_x / n_1^2 (independent given the prior); 0.5 and 0 when there are none."""
    if not len(mean):
        return 0.5, 0.0
    return float(mean.mean()), float(var.sum()) / len(var) ** 2
