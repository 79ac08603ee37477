"""The watchdog's bi-partition of the observed alphabet and its critical epsilons."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import DEFAULT_ATOL, check_nonnegative, check_pmf
from ..measures import log_lift

__all__ = ["critical_epsilons", "partition", "symbol_risk"]

FloatArray = NDArray[np.float64]


def _symbol_risk(p: FloatArray) -> FloatArray:
    """max_s |i(s, x)| over sensitive values of positive probability (0 where p(x) = 0)."""
    abs_ll = np.abs(log_lift(p)[p.sum(axis=1) > 0])  # NaN only where p(x) = 0
    abs_ll[:, p.sum(axis=0) <= 0] = 0.0  # a symbol that never occurs carries no risk
    return np.asarray(abs_ll.max(axis=0), dtype=np.float64)


def symbol_risk(p: ArrayLike, *, atol: float = DEFAULT_ATOL) -> FloatArray:
    r"""Risk of each observed symbol: its largest absolute log-lift over the sensitive values.

    .. math:: \omega(x) = \max_{s:\,p(s)>0} |i(s, x)|

    (Sadeghi et al. eq. (4) for a singleton; ``inf`` when x rules out some s; 0 for symbols of
    zero probability.)

    Examples
    --------
    >>> symbol_risk([[0.4, 0.1], [0.1, 0.4]]).round(4)
    array([0.9163, 0.9163])
    """
    return _symbol_risk(check_pmf(p, atol=atol))


def partition(p: ArrayLike, epsilon: float, *, atol: float = DEFAULT_ATOL) -> NDArray[np.bool_]:
    r"""The watchdog's set :math:`\mathcal{X}_\varepsilon` as a boolean mask over observed symbols.

    .. math:: \mathcal{X}_\varepsilon = \{x : |i(s, x)| \le \varepsilon \ \forall s\}

    Hsu et al. Definition 2. True: released unchanged; False: flagged, in
    :math:`\mathcal{X}_\varepsilon^c`, to be randomized.

    Examples
    --------
    >>> partition([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]], 0.5)
    array([False, False,  True])
    """
    eps = check_nonnegative(epsilon, "epsilon", allow_inf=True)
    return _symbol_risk(check_pmf(p, atol=atol)) <= eps


def critical_epsilons(p: ArrayLike, *, atol: float = DEFAULT_ATOL) -> FloatArray:
    r"""The strictly decreasing critical values :math:`\varepsilon_1 > \varepsilon_2 > \dots`.

    They are the distinct values of :math:`\omega(x)` over symbols of positive probability
    (Sadeghi et al. §IV, eq. (6)): the partition only changes when epsilon crosses one of them;
    for :math:`\varepsilon \ge \varepsilon_1` nothing is flagged. Infinite risks are included.

    Examples
    --------
    >>> critical_epsilons([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]]).round(4)
    array([0.6931, 0.    ])
    """
    arr = check_pmf(p, atol=atol)
    risk = _symbol_risk(arr)[arr.sum(axis=0) > 0]
    return np.unique(np.round(risk, 12))[::-1].astype(np.float64)


def _set_abs_log_lift(
    p: FloatArray, p_s: FloatArray, mask: NDArray[np.bool_]
) -> tuple[FloatArray, FloatArray] | None:
    """``(P(s, A), |i(s, A)|)`` over sensitive values of positive probability, for the set A of
    observed symbols in ``mask``; None when P(A) = 0 (empty or null set)."""
    return _merged_abs_log_lift(p[:, mask].sum(axis=1), p_s)


def _merged_abs_log_lift(
    joint_a: FloatArray, p_s: FloatArray
) -> tuple[FloatArray, FloatArray] | None:
    """:func:`_set_abs_log_lift` from the set's column ``joint_a[s] = P(s, A)``."""
    p_a = float(joint_a.sum())
    if p_a <= 0:
        return None
    rows = p_s > 0
    with np.errstate(divide="ignore"):
        return joint_a[rows], np.abs(np.log(joint_a[rows] / (p_s[rows] * p_a)))


def _set_risk(p: FloatArray, mask: NDArray[np.bool_]) -> float:
    """omega(A) = max_s |i(s, A)| for the set A given by ``mask`` (0 for an empty or null set)."""
    found = _set_abs_log_lift(p, p.sum(axis=1), mask)
    return 0.0 if found is None else float(found[1].max())
