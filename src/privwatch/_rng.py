"""One helper that turns every accepted ``rng`` argument into a :class:`numpy.random.Generator`."""

from __future__ import annotations

import numbers

import numpy as np

from .exceptions import ValidationError

RNGLike = int | np.random.Generator | None

__all__ = ["RNGLike", "check_rng"]


def check_rng(rng: RNGLike) -> np.random.Generator:
    """Normalise ``rng`` (None, a non-negative int seed, or a Generator) to a Generator.

    >>> bool(check_rng(0).integers(10) == check_rng(0).integers(10))
    True
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng))
    raise ValidationError(
        f"`rng` must be None, a non-negative int or a numpy.random.Generator; got {rng!r}."
    )
