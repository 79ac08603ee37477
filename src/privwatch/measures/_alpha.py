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


#: Within this distance of alpha = 1 the orders are evaluated in the expm1/log1p form below.
_NEAR_ONE = 0.5


def _log_mean_power(weights: FloatArray, values: FloatArray, b: float, axis: int = 0) -> FloatArray:
    """``log sum_i w_i v_i**b`` (weights summing to 1 along ``axis``) without cancellation for
    small ``b``: the first-order series term ``b sum_i w_i log v_i`` is carried exactly by
    ``log1p(sum_i w_i expm1(b log v_i))``; entries with zero weight are skipped."""
    live = weights > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logs = np.where(live, np.log(np.where(live, values, 1.0)), 0.0)
        terms = np.where(live, weights * np.expm1(b * logs), 0.0)
    return np.asarray(np.log1p(terms.sum(axis=axis)), dtype=np.float64)


def _sibson_near_one(arr: FloatArray, a: float) -> float:
    """Sibson's MI for |alpha - 1| <= 1/2 as (alpha/(alpha-1)) log1p(...): with b = alpha - 1,
    (sum_s p_s p(x|s)^alpha)^(1/alpha) = p(x) exp(v_x), v_x = (log M_x - b log p(x)) / alpha,
    M_x = sum_s P(s|x) p(x|s)^b, and log sum_x p(x) exp(v_x) = log1p(sum_x p(x) expm1(v_x)).
    Every piece is O(b) and computed to relative precision, so the ratio keeps full accuracy as
    alpha -> 1 (where the direct formula loses all digits to cancellation)."""
    b = a - 1.0
    arr = arr / arr.sum()
    p_s, p_x = marginals(arr)
    cols = p_x > 0
    joint = arr[:, cols]
    px = p_x[cols]
    post = joint / px[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(p_s[:, None] > 0, joint / np.where(p_s > 0, p_s, 1.0)[:, None], 0.0)
    log_m = _log_mean_power(post, cond, b, axis=0)
    v = (log_m - b * np.log(px)) / a
    log_total = float(np.log1p(np.sum(px * np.expm1(v))))
    return a / b * log_total


def _arimoto_near_one(arr: FloatArray, a: float) -> float:
    """Arimoto's MI for |alpha - 1| <= 1/2 in the same expm1/log1p form: with b = alpha - 1,
    ||p(., x)||_alpha = p(x) exp(w_x), w_x = log(sum_s P(s|x) P(s|x)^b) / alpha, and
    log ||P_S||_alpha = log(sum_s p_s p_s^b) / alpha."""
    b = a - 1.0
    arr = arr / arr.sum()
    p_s, p_x = marginals(arr)
    cols = p_x > 0
    post = arr[:, cols] / p_x[cols][None, :]
    w = _log_mean_power(post, post, b, axis=0) / a
    log_num = float(np.log1p(np.sum(p_x[cols] * np.expm1(w))))
    log_den = float(_log_mean_power(p_s[:, None], p_s[:, None], b, axis=0)[0]) / a
    return a / b * (log_num - log_den)


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
    elif abs(a - 1.0) <= _NEAR_ONE:
        value = max(0.0, _sibson_near_one(arr, a))
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
    elif abs(a - 1.0) <= _NEAR_ONE:
        value = _arimoto_near_one(arr, a)
    else:
        ones = np.ones(arr.shape[0])
        # E_X ||P_{S|X}(.|X)||_alpha = sum_x ||p(., x)||_alpha
        numerator = float(_scaled_power_sum(arr, ones, a).sum())
        denominator = float(_scaled_power_sum(p_s[:, None], ones, a)[0])
        value = a / (a - 1.0) * math.log(numerator / denominator)
    return in_base(max(0.0, value), base)
