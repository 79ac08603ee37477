"""Shared helpers of the measure kernels: marginals, safe lift, logarithm base."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._validation import check_base

FloatArray = NDArray[np.float64]


def marginals(p: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Return ``(p_s, p_x)``: the row and column sums of ``p[s, x]``."""
    return p.sum(axis=1), p.sum(axis=0)


def safe(v: FloatArray) -> FloatArray:
    """``v`` with zeros replaced by ones, for divisions whose numerator is then zero too."""
    return np.where(v > 0, v, 1.0)


def raw_lift(p: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return ``(l, p_s, p_x)`` with ``l = p / (p_s p_x)`` and 0 outside the marginal support.

    A lift beyond the float64 range (marginals below ~1e-154) is ``inf``, as documented by the
    callers; the overflow is expected, so it is not reported as a RuntimeWarning."""
    p_s, p_x = marginals(p)
    with np.errstate(over="ignore"):
        lift = p / safe(p_x)[None, :]
        lift /= safe(p_s)[:, None]
    return lift, p_s, p_x


def log_lift_slow(p: FloatArray) -> FloatArray:
    """``log p - log p_s - log p_x`` in the log domain: no overflow when the lift itself exceeds
    the float range (tiny marginals). ``-inf`` for impossible cells, NaN outside the support."""
    p_s, p_x = marginals(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(p) - np.log(p_s)[:, None] - np.log(p_x)[None, :]
    out[(p_s[:, None] <= 0) | (p_x[None, :] <= 0)] = np.nan
    return out


def in_base(value: float, base: float | None) -> float:
    """Convert a value in nats to the logarithm ``base`` (None keeps nats)."""
    b = check_base(base)
    return float(value) if b is None else float(value) / math.log(b)
