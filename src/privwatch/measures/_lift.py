"""Lift, log-lift (information density), the lift-privacy epsilon and the subset log-lift.

Support convention (used everywhere in privwatch): a cell ``(s, x)`` is *in the support* when
``p(s) > 0`` and ``p(x) > 0``. Outside it the lift is undefined and these functions return NaN.
Inside it, a cell with ``p(s, x) = 0`` has lift 0 and log-lift ``-inf``: observing ``x`` rules
out ``s``, which no finite epsilon of lift privacy allows.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._validation import DEFAULT_ATOL, check_base, check_mask, check_pmf
from ._common import FloatArray, in_base, log_lift_slow, marginals, raw_lift

__all__ = ["lift", "lift_epsilon", "log_lift", "subset_log_lift"]


def _outside(p_s: FloatArray, p_x: FloatArray) -> np.ndarray:
    return (p_s[:, None] <= 0) | (p_x[None, :] <= 0)


def _rebase(values: FloatArray, base: float | None) -> FloatArray:
    b = check_base(base)
    if b is not None:
        values /= math.log(b)
    return values


def lift(p: ArrayLike, *, atol: float = DEFAULT_ATOL) -> FloatArray:
    r"""Lift of every cell of a joint pmf ``p[s, x]`` (same shape as ``p``).

    .. math:: l(s, x) = \frac{p(s, x)}{p(s)\,p(x)} = \frac{P_{S|X}(s|x)}{P_S(s)}

    Hsu, Asoodeh, Calmon, eq. (1). NaN outside the support (see the module docstring).

    Examples
    --------
    >>> lift([[0.4, 0.1], [0.1, 0.4]])
    array([[1.6, 0.4],
           [0.4, 1.6]])
    """
    arr = check_pmf(p, atol=atol)
    out, p_s, p_x = raw_lift(arr)
    out[_outside(p_s, p_x)] = np.nan
    return out


def log_lift(p: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL) -> FloatArray:
    r"""Log-lift (information density) ``i(s, x) = log l(s, x)`` of every cell of ``p[s, x]``.

    .. math:: i(s, x) = \log \frac{p(s, x)}{p(s)\,p(x)}

    Hsu et al. eq. (1). ``-inf`` where ``p(s, x) = 0`` inside the support, NaN outside it.

    Examples
    --------
    >>> log_lift([[0.5, 0.0], [0.0, 0.5]], base=2)
    array([[  1., -inf],
           [-inf,   1.]])
    """
    out = lift(p, atol=atol)
    with np.errstate(divide="ignore"):
        np.log(out, out=out)
    if (out == np.inf).any():  # a lift overflowed float64: use the log domain
        out = log_lift_slow(check_pmf(p, atol=atol))
    return _rebase(out, base)


def lift_epsilon(p: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL) -> float:
    r"""The smallest epsilon for which X is an epsilon-lift private version of S.

    .. math:: \varepsilon(p) = \max_{(s, x) \in \mathrm{supp}} |i(s, x)|

    Hsu et al. Definition 1. ``inf`` when a cell of the support has zero probability.

    Examples
    --------
    >>> round(lift_epsilon([[0.4, 0.1], [0.1, 0.4]]), 6)  # |log 0.4| > log 1.6
    0.916291
    """
    arr = check_pmf(p, atol=atol)
    raw, p_s, p_x = raw_lift(arr)
    rows, cols = p_s > 0, p_x > 0
    inside = raw if rows.all() and cols.all() else raw[rows][:, cols]
    lo, hi = float(inside.min()), float(inside.max())
    if lo <= 0.0:
        return math.inf
    if math.isinf(hi):  # lift overflowed float64: use the log domain
        ll = log_lift_slow(arr)
        return in_base(float(np.nanmax(np.abs(ll))), base)
    return in_base(max(math.log(hi), -math.log(lo)), base)


def subset_log_lift(
    p: ArrayLike, mask: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL
) -> FloatArray:
    r"""Log-lift of a set A of observed symbols, one value per sensitive symbol.

    .. math:: i(s, A) = \log \frac{P_{X|S}(A|s)}{P_X(A)} = \log \frac{P(s, A)}{P_S(s) P_X(A)}

    Sadeghi, Ding, Rakotoarivelo, eq. (2). NaN for sensitive symbols of zero probability and for
    every s when ``P_X(A) = 0``; ``-inf`` when ``P(s, A) = 0 < P_S(s) P_X(A)``.

    Parameters
    ----------
    p : array_like, shape (n_sensitive, n_observed)
    mask : array_like of bool, shape (n_observed,)
        True for the observed symbols in A.

    Examples
    --------
    >>> subset_log_lift([[0.4, 0.1], [0.1, 0.4]], [True, True])
    array([0., 0.])
    """
    arr = check_pmf(p, atol=atol)
    a = check_mask(mask, arr.shape[1])
    p_s, p_x = marginals(arr)
    p_a = float(p_x[a].sum())
    joint_a = arr[:, a].sum(axis=1)
    out = np.full(arr.shape[0], np.nan)
    ok = p_s > 0
    if p_a > 0:
        with np.errstate(divide="ignore"):
            out[ok] = np.log(joint_a[ok] / (p_s[ok] * p_a))
    return _rebase(out, base)
