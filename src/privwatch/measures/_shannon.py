"""Shannon entropy, mutual information and the normalized mutual information loss."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import xlogy

from .._validation import DEFAULT_ATOL, check_channel, check_pmf
from ._common import FloatArray, in_base, log_lift_slow, raw_lift

__all__ = ["entropy", "mutual_information", "nmil"]


def entropy(p: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL) -> float:
    r"""Shannon entropy of a pmf of any shape.

    .. math:: H(P) = -\sum_i p_i \log p_i \qquad (0 \log 0 = 0)

    Parameters
    ----------
    p : array_like
        Probability mass function (any shape; a joint ``p[s, x]`` gives the joint entropy).
    base : float, optional
        Logarithm base; None (default) gives nats.
    atol : float
        Tolerance on ``sum(p) == 1``.

    Examples
    --------
    >>> entropy([0.5, 0.5], base=2)
    1.0
    """
    arr = check_pmf(p, ndim=None, atol=atol)
    return in_base(max(0.0, -float(xlogy(arr, arr).sum())), base)


def _mi_nats(p: FloatArray) -> float:
    lift, _, _ = raw_lift(p)
    np.log(lift, out=lift, where=lift > 0)
    value = float(np.vdot(p, lift))
    if not np.isfinite(value):  # a lift overflowed float64: redo it in the log domain
        ll = log_lift_slow(p)
        value = float(np.sum(p[p > 0] * ll[p > 0]))
    return max(0.0, value)


def mutual_information(
    p: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL
) -> float:
    r"""Mutual information I(S; X) of a joint pmf ``p[s, x]``.

    .. math:: I(S;X) = \sum_{s,x} p(s,x) \log \frac{p(s,x)}{p(s)\,p(x)}
              = \mathbb{E}[i(S, X)]

    the expectation of the information density (log-lift), Hsu et al. eq. (1).

    Examples
    --------
    >>> mutual_information([[0.5, 0.0], [0.0, 0.5]], base=2)
    1.0
    >>> mutual_information([[0.25, 0.25], [0.25, 0.25]])
    0.0
    """
    return in_base(_mi_nats(check_pmf(p, atol=atol)), base)


def nmil(p_x: ArrayLike, k: ArrayLike, *, atol: float = DEFAULT_ATOL) -> float:
    r"""Normalized mutual information loss of releasing Y through channel ``k[x, y]``.

    .. math:: \mathrm{NMIL} = 1 - \frac{I(X;Y)}{H(X)}

    (Sadeghi, Ding, Rakotoarivelo, eq. (9)). 0 means no utility is lost (Y determines X), 1 means
    Y is independent of X. When ``H(X) = 0`` there is nothing to lose and 0 is returned.
    Base-free (a ratio).

    Parameters
    ----------
    p_x : array_like, shape (n_observed,)
        Input pmf.
    k : array_like, shape (n_observed, n_release)
        Row-stochastic channel.

    Examples
    --------
    >>> nmil([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0]])
    0.0
    >>> nmil([0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]])
    1.0
    """
    px = check_pmf(p_x, "p_x", ndim=1, atol=atol)
    kk = check_channel(k, n_inputs=px.shape[0], atol=atol)
    h = -float(xlogy(px, px).sum())
    if h <= 0.0:
        return 0.0
    info = _mi_nats(px[:, None] * kk)
    return float(min(1.0, max(0.0, 1.0 - info / h)))
