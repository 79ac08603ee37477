"""Random joint pmfs and channels (for Monte Carlo studies and property tests)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._memory import check_allocation
from .._rng import RNGLike, check_rng
from .._validation import check_positive, check_positive_int

__all__ = ["random_channel", "random_joint"]


def random_joint(
    n_sensitive: int, n_observed: int, *, concentration: float = 1.0, rng: RNGLike = None
) -> NDArray[np.float64]:
    """A joint pmf ``p[s, x]`` drawn from the flat Dirichlet(concentration) on the simplex.

    >>> random_joint(2, 3, rng=0).shape
    (2, 3)
    """
    check_positive_int(n_sensitive, "n_sensitive")
    check_positive_int(n_observed, "n_observed")
    a = _check_concentration(concentration)
    check_allocation("n_sensitive * n_observed", (n_sensitive, n_observed, 2))
    g = check_rng(rng)
    p = _dirichlet(g, a, int(n_sensitive) * int(n_observed), 1).reshape(
        int(n_sensitive), int(n_observed)
    )
    return np.asarray(p / p.sum(), dtype=np.float64)


def random_channel(
    n_inputs: int, n_outputs: int, *, concentration: float = 1.0, rng: RNGLike = None
) -> NDArray[np.float64]:
    """A channel ``k[x, y]`` whose rows are independent Dirichlet(concentration) draws.

    >>> random_channel(3, 4, rng=0).sum(axis=1)
    array([1., 1., 1.])
    """
    check_positive_int(n_inputs, "n_inputs")
    check_positive_int(n_outputs, "n_outputs")
    a = _check_concentration(concentration)
    check_allocation("n_inputs * n_outputs", (n_inputs, n_outputs, 2))
    g = check_rng(rng)
    k = _dirichlet(g, a, int(n_outputs), int(n_inputs))
    return np.asarray(k / k.sum(axis=1, keepdims=True), dtype=np.float64)


def _check_concentration(concentration: float) -> float:
    # Dirichlet(0) is degenerate (NumPy returns NaN); an infinite one is the uniform pmf but
    # NumPy returns NaN for it too, so both ends are refused.
    return check_positive(concentration, "concentration")


def _dirichlet(g: np.random.Generator, a: float, size: int, rows: int) -> NDArray[np.float64]:
    """``rows`` Dirichlet(a, ..., a) draws of length ``size`` (NumPy's sampler, same streams).

    For tiny ``a`` NumPy can return a row of NaN (every Gamma variate underflows); such a row is
    replaced by a one-hot vector at a uniform position, the limit of the Dirichlet as a -> 0.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.asarray(g.dirichlet(np.full(size, a), size=rows), dtype=np.float64)
    dead = ~np.isfinite(out).all(axis=1) | (out.sum(axis=1) <= 0)
    if dead.any():
        out[dead] = 0.0
        out[np.flatnonzero(dead), g.integers(size, size=int(dead.sum()))] = 1.0
    return out
