"""Closed-form optimal privacy-distortion tradeoffs, in nats (Tripathy, Wang, Ishwar, PPAN).

Each function returns the least mutual information I(S; Y) between the sensitive attribute and
any release whose expected distortion of the useful attribute is at most ``budget`` (problem (1)
of the paper), for the data models where it is known in closed form. Notation: the paper writes
X for the sensitive, W for the observed, Y for the useful attribute and Z for the release.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq

from ._validation import check_nonnegative, check_positive, check_probability
from .exceptions import ValidationError

__all__ = [
    "gaussian_full_data",
    "gaussian_rate_distortion",
    "gaussian_useful_data",
    "gaussian_vector_useful_data",
    "symmetric_pair_mi",
    "symmetric_pair_optimum",
]


def _rho(rho: float, *, low: float = -1.0) -> float:
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.integer, np.floating)):
        raise ValidationError(f"`rho` must be in [{low:g}, 1]; got {rho!r}.")
    r = float(rho)
    if not (math.isfinite(r) and low <= r <= 1.0):
        raise ValidationError(f"`rho` must be in [{low:g}, 1]; got {rho!r}.")
    return r


def _real_vector(values: Sequence[float], message: str) -> NDArray[np.float64]:
    """``values`` as a float array; complex, string and object entries raise ``message``."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):
        raise ValidationError(message) from None
    if raw.dtype.kind not in "iuf":
        raise ValidationError(message)
    return np.asarray(raw, dtype=np.float64)


def _h2(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -p * math.log(p) - (1 - p) * math.log(1 - p)


def _check_m(m: int) -> int:
    if isinstance(m, bool) or not (isinstance(m, (int, np.integer)) and m >= 2):
        raise ValidationError(f"`m` must be an int >= 2; got {m!r}.")
    return int(m)


def symmetric_pair_mi(p: float, m: int) -> float:
    r"""I(S; U) of the symmetric pair distribution: S uniform on m values, U = S with probability
    1 - p, otherwise uniform on the other m - 1 values (PPAN eq. 7, App. G):
    :math:`r_m(p) = \log m - p \log(m - 1) - h_2(p)`.

    >>> round(symmetric_pair_mi(0.0, 2), 6) == round(math.log(2), 6)
    True
    >>> symmetric_pair_mi(0.5, 2)
    0.0
    """
    m = _check_m(m)
    p = check_probability(p, "p")
    value = math.log(m) - p * math.log(m - 1) - _h2(p)
    return max(0.0, value)


def symmetric_pair_optimum(budget: float, *, m: int, p: float, observation: str = "full") -> float:
    r"""Optimal leakage for the symmetric pair with Hamming distortion Pr[U != Y] <= budget.

    With :math:`L` the budget: ``observation="full"`` (observed = (S, U), eq. 30):
    :math:`r_m(p + L)` if :math:`L \le 1 - 1/m - p`, :math:`r_m(p - L)` if
    :math:`L \le p - (1 - 1/m)`, else 0.
    ``observation="useful"`` (observed = U, eq. 31):
    :math:`r_m\big(p + L (1 - \frac{pm}{m - 1})\big)` if :math:`L < 1 - 1/m`, else 0.
    The samples of this model come from :func:`privwatch.datasets.symmetric_pair`.

    >>> round(symmetric_pair_optimum(0.0, m=10, p=0.4), 6) == round(symmetric_pair_mi(0.4, 10), 6)
    True
    >>> symmetric_pair_optimum(0.5, m=10, p=0.4)  # p + budget = 0.9 = 1 - 1/m: independent
    0.0
    """
    d = check_nonnegative(budget, "budget")
    if d > 1:
        raise ValidationError(
            f"`budget` must be in [0, 1] (a probability of error); got {budget!r}."
        )
    m = _check_m(m)
    p = check_probability(p, "p")
    if observation == "full":
        if d <= 1 - 1 / m - p:
            return symmetric_pair_mi(p + d, m)
        if d <= p - (1 - 1 / m):
            return symmetric_pair_mi(p - d, m)
        return 0.0
    if observation == "useful":
        if d < 1 - 1 / m:
            return symmetric_pair_mi(p + d * (1 - p * m / (m - 1)), m)
        return 0.0
    raise ValidationError(f"`observation` must be 'full' or 'useful'; got {observation!r}.")


def gaussian_useful_data(budget: float, *, rho: float, var_useful: float = 1.0) -> float:
    r"""Prop. 1: sensitive and useful jointly Gaussian (correlation rho), observed = useful,
    MSE E(U - Y)^2 <= L (the ``budget``):
    :math:`\max\{0, \tfrac12 \log \frac{1}{1 - \rho^2 + \rho^2 L / \sigma_U^2}\}`.

    >>> round(gaussian_useful_data(0.0, rho=0.85), 6) == round(-0.5 * math.log(1 - 0.85**2), 6)
    True
    >>> gaussian_useful_data(1.0, rho=0.85)
    0.0
    """
    d = check_nonnegative(budget, "budget")
    r = _rho(rho)
    v = check_positive(var_useful, "var_useful")
    if d >= v:
        return 0.0
    return max(0.0, 0.5 * math.log(1.0 / (1.0 - r * r + r * r * d / v)))


def gaussian_full_data(budget: float, *, rho: float) -> float:
    r"""Prop. 3: unit-variance sensitive and useful (correlation rho in [0, 1]), observed =
    (sensitive, useful), MSE <= L (the ``budget``): 0 if :math:`L \ge \rho^2`, else
    :math:`\tfrac12 \log \frac{1}{1 - (\sqrt{\rho^2 (1 - L)} - \sqrt{(1 - \rho^2)L})^2}`.

    >>> gaussian_full_data(0.0, rho=0.85) == gaussian_useful_data(0.0, rho=0.85)
    True
    >>> gaussian_full_data(0.7225, rho=0.85)
    0.0
    """
    d = check_nonnegative(budget, "budget")
    r = _rho(rho, low=0.0)
    if d >= r * r:
        return 0.0
    c = math.sqrt(r * r * (1 - d)) - math.sqrt((1 - r * r) * d)
    return 0.5 * math.log(1.0 / (1.0 - c * c))


def gaussian_vector_useful_data(
    budget: float, *, rho: Sequence[float], scale: float = 1.0
) -> float:
    r"""Prop. 2: canonical pairs (S'_i, U'_i) with correlations ``rho`` (all > 0), observed =
    useful, total MSE <= L (the ``budget``; ``scale`` = c when the reduction of eq. 12 applies,
    budget L / c):

    .. math:: \delta'_i = \min\{1, \max\{0, t - (\rho_i^{-2} - 1)\}\},\quad
              \sum_i \delta'_i = L / c,\quad
              I = \sum_i \max\{0, -\tfrac12 \log(1 - \rho_i^2 + \rho_i^2 \delta'_i)\}

    with t found numerically (the paper's formula, clipped at 0 so that no component takes a
    negative distortion). Returns 0 once L / c >= the number of components.

    >>> rho = [0.47, 0.24, 0.85, 0.07, 0.66]
    >>> round(gaussian_vector_useful_data(0.0, rho=rho), 6) == round(
    ...     sum(-0.5 * math.log(1 - r * r) for r in rho), 6)
    True
    """
    d = check_nonnegative(budget, "budget") / check_positive(scale, "scale")
    r = _real_vector(rho, f"`rho` must be a non-empty list of values in (0, 1]; got {rho!r}.")
    if r.ndim != 1 or r.size == 0 or not ((r > 0) & (r <= 1)).all():
        raise ValidationError(f"`rho` must be a non-empty list of values in (0, 1]; got {rho!r}.")
    if d >= r.size:
        return 0.0
    offset = 1.0 / r**2 - 1.0

    def spent(t: float) -> float:
        return float(np.clip(t - offset, 0.0, 1.0).sum()) - d

    t = brentq(spent, 0.0, float(offset.max()) + 1.0) if d > 0 else 0.0
    parts = np.clip(t - offset, 0.0, 1.0)
    return float(np.maximum(0.0, -0.5 * np.log(1 - r**2 + r**2 * parts)).sum())


def gaussian_rate_distortion(budget: float, variances: Sequence[float]) -> float:
    r"""Rate-distortion function of independent Gaussians under total MSE at most D (the
    ``budget``), by reverse waterfilling (PPAN §III-B2):
    :math:`R(D) = \sum_j \max\{0, \tfrac12 \log(\sigma_j^2 / D_j)\}`,
    :math:`D_j = \min\{\theta, \sigma_j^2\}`, :math:`\sum_j D_j = D`.

    >>> round(gaussian_rate_distortion(1.0, [1.0, 1.0]), 6) == round(math.log(2), 6)
    True
    >>> gaussian_rate_distortion(5.0, [1.0, 2.0])
    0.0
    """
    D = check_nonnegative(budget, "budget")
    var = _real_vector(
        variances, f"`variances` must be a non-empty list of positive numbers; got {variances!r}."
    )
    with np.errstate(over="ignore"):
        finite_total = bool(np.isfinite(var.sum())) if var.size else False
    if (
        var.ndim != 1
        or var.size == 0
        or not (np.isfinite(var) & (var > 0)).all()
        or not finite_total
    ):
        raise ValidationError(
            f"`variances` must be a non-empty list of positive numbers; got {variances!r}."
        )
    if var.sum() <= D:
        return 0.0
    if D == 0:
        return math.inf
    theta = brentq(lambda th: float(np.minimum(th, var).sum()) - D, 0.0, float(var.max()))
    parts = np.minimum(theta, var)
    return float(np.maximum(0.0, 0.5 * np.log(var / parts)).sum())
