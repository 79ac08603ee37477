"""Sibson and Arimoto alpha-mutual information and maximal leakage."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._validation import DEFAULT_ATOL, check_alpha, check_pmf
from ._common import FloatArray, in_base, marginals, safe
from ._shannon import _mi_nats

__all__ = ["arimoto_mi", "maximal_leakage", "sibson_mi"]


def _scaled_power_sum(cols: FloatArray, weights: FloatArray, alpha: float) -> FloatArray:
    """Per column x: ``(sum_s w_s c[s, x]^alpha)^(1/alpha)``, scaled by the column max for
    numerical stability at large alpha (no overflow, no underflow of the dominant term)."""
    peak = cols.max(axis=0)
    ratio = cols / safe(peak)[None, :]
    np.power(ratio, alpha, out=ratio)
    inner = weights @ ratio
    return np.asarray(peak * np.power(inner, 1.0 / alpha), dtype=np.float64)


def _column_max_of_conditional(p: FloatArray) -> FloatArray:
    """``max_s P_{X|S}(x|s)`` per column x, over sensitive values of positive probability.

    Few rows: a running maximum row by row (no |S| x |X| temporary); many rows: vectorised.
    """
    p_s = p.sum(axis=1)
    rows = np.flatnonzero(p_s > 0)
    if rows.size > 64:
        return np.asarray((p[rows] / p_s[rows, None]).max(axis=0), dtype=np.float64)
    best = p[rows[0]] / p_s[rows[0]]
    scratch = np.empty_like(best)
    for s in rows[1:]:
        np.divide(p[s], p_s[s], out=scratch)
        np.maximum(best, scratch, out=best)
    return np.asarray(best, dtype=np.float64)


def _max_leakage_nats(p: FloatArray) -> float:
    return max(0.0, math.log(float(_column_max_of_conditional(p).sum())))


def maximal_leakage(
    p: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL
) -> float:
    r"""Maximal leakage from S to X (Issa, Wagner, Kamath), Sibson's MI of order infinity.

    .. math:: \mathcal{L}(S \to X) = \log \sum_x \max_{s:\,p(s)>0} P_{X|S}(x|s)

    Hsu et al. eq. (8) and Prop. 1 (bounded by the lift epsilon).

    Examples
    --------
    >>> maximal_leakage([[0.5, 0.0], [0.0, 0.5]], base=2)
    1.0
    """
    return in_base(_max_leakage_nats(check_pmf(p, atol=atol)), base)


def sibson_mi(
    p: ArrayLike, alpha: float, *, base: float | None = None, atol: float = DEFAULT_ATOL
) -> float:
    r"""Sibson's mutual information of order alpha between S and X.

    .. math:: I^S_\alpha(S;X) = \inf_{Q_X} D_\alpha(P_{S,X} \| P_S Q_X)
              = \frac{\alpha}{\alpha-1} \log \sum_x
                \Big(\sum_s P_S(s) P_{X|S}(x|s)^\alpha\Big)^{1/\alpha}

    Hsu et al. eq. (7) (Verdú's closed form). ``alpha`` in (0, inf]: ``alpha = 1`` is Shannon's
    mutual information and ``alpha = inf`` maximal leakage (the limits).

    Examples
    --------
    >>> round(sibson_mi([[0.5, 0.0], [0.0, 0.5]], 2.0, base=2), 12)
    1.0
    """
    arr = check_pmf(p, atol=atol)
    a = check_alpha(alpha)
    if a == 1.0:
        value = _mi_nats(arr)
    elif math.isinf(a):
        value = _max_leakage_nats(arr)
    else:
        p_s, _ = marginals(arr)
        rows = p_s > 0
        cond = arr[rows] / p_s[rows, None]
        total = float(_scaled_power_sum(cond, p_s[rows], a).sum())
        value = max(0.0, a / (a - 1.0) * math.log(total))
    return in_base(value, base)


def arimoto_mi(
    p: ArrayLike, alpha: float, *, base: float | None = None, atol: float = DEFAULT_ATOL
) -> float:
    r"""Arimoto's mutual information of order alpha between S and X.

    .. math:: I^A_\alpha(S;X) = H_\alpha(S) - H^A_\alpha(S|X)
              = \frac{\alpha}{\alpha-1}
                \log \frac{\mathbb{E}_X \|P_{S|X}(\cdot|X)\|_\alpha}{\|P_S\|_\alpha}

    Hsu et al. eq. (6). ``alpha`` in (0, inf]: ``alpha = 1`` is Shannon's mutual information,
    ``alpha = inf`` is ``log P_c(S|X) / p*_S`` (see :func:`bayes_leakage`).

    Examples
    --------
    >>> round(arimoto_mi([[0.5, 0.0], [0.0, 0.5]], 2.0, base=2), 12)
    1.0
    """
    arr = check_pmf(p, atol=atol)
    a = check_alpha(alpha)
    p_s, _ = marginals(arr)
    if a == 1.0:
        value = _mi_nats(arr)
    elif math.isinf(a):
        value = math.log(float(arr.max(axis=0).sum()) / float(p_s.max()))
    else:
        ones = np.ones(arr.shape[0])
        # E_X ||P_{S|X}(.|X)||_alpha = sum_x ||p(., x)||_alpha
        numerator = float(_scaled_power_sum(arr, ones, a).sum())
        denominator = float(_scaled_power_sum(p_s[:, None], ones, a)[0])
        value = a / (a - 1.0) * math.log(numerator / denominator)
    return in_base(max(0.0, value), base)
