"""Random joint pmfs and channels (for Monte Carlo studies and property tests)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._rng import RNGLike, check_rng

__all__ = ["random_channel", "random_joint"]


def random_joint(
    n_sensitive: int, n_observed: int, *, concentration: float = 1.0, rng: RNGLike = None
) -> NDArray[np.float64]:
    """A joint pmf ``p[s, x]`` drawn from the flat Dirichlet(concentration) on the simplex.

    >>> random_joint(2, 3, rng=0).shape
    (2, 3)
    """
    g = check_rng(rng)
    p = g.dirichlet(np.full(n_sensitive * n_observed, concentration)).reshape(
        n_sensitive, n_observed
    )
    return np.asarray(p / p.sum(), dtype=np.float64)


def random_channel(
    n_inputs: int, n_outputs: int, *, concentration: float = 1.0, rng: RNGLike = None
) -> NDArray[np.float64]:
    """A channel ``k[x, y]`` whose rows are independent Dirichlet(concentration) draws.

    >>> random_channel(3, 4, rng=0).sum(axis=1)
    array([1., 1., 1.])
    """
    g = check_rng(rng)
    k = g.dirichlet(np.full(n_outputs, concentration), size=n_inputs)
    return np.asarray(k / k.sum(axis=1, keepdims=True), dtype=np.float64)
