"""Guessing probability, Bayes error and Bayes (min-entropy) leakage of S from X."""

from __future__ import annotations

import math

from numpy.typing import ArrayLike

from .._validation import DEFAULT_ATOL, check_pmf
from ._common import in_base

__all__ = ["bayes_error", "bayes_leakage", "guessing_probability"]


def guessing_probability(p: ArrayLike, *, atol: float = DEFAULT_ATOL) -> float:
    r"""Probability that the best (MAP) adversary guesses S from X: the posterior Bayes
    vulnerability.

    .. math:: P_c(S|X) = \max_{g} \Pr[S = g(X)] = \sum_x \max_s p(s, x)

    Hsu et al. §II-B.

    Examples
    --------
    >>> guessing_probability([[0.4, 0.1], [0.1, 0.4]])
    0.8
    """
    # a pmf summing to 1 within atol can give a column-max sum a rounding above 1
    return min(1.0, float(check_pmf(p, atol=atol).max(axis=0).sum()))


def bayes_error(p: ArrayLike, *, atol: float = DEFAULT_ATOL) -> float:
    r"""Bayes error of guessing S from X: :math:`1 - P_c(S|X)` (the Bayes risk under 0-1 loss).

    Examples
    --------
    >>> round(bayes_error([[0.4, 0.1], [0.1, 0.4]]), 12)
    0.2
    """
    return max(0.0, 1.0 - guessing_probability(p, atol=atol))


def bayes_leakage(p: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL) -> float:
    r"""Multiplicative Bayes (min-entropy) leakage, Arimoto's MI of order infinity.

    .. math:: I^A_\infty(S;X) = \log \frac{P_c(S|X)}{p^*_S}, \qquad p^*_S = \max_s P_S(s)

    Hsu et al. §II-B; bounded by the lift epsilon (Prop. 1.2).

    Examples
    --------
    >>> round(bayes_leakage([[0.4, 0.1], [0.1, 0.4]], base=2), 6)  # log2(0.8 / 0.5)
    0.678072
    """
    arr = check_pmf(p, atol=atol)
    value = math.log(float(arr.max(axis=0).sum()) / float(arr.sum(axis=1).max()))
    return in_base(max(0.0, value), base)
