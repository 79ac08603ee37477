"""Local differential privacy level of a channel."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._validation import DEFAULT_ATOL, check_channel
from ._common import in_base

__all__ = ["ldp_epsilon"]


def ldp_epsilon(k: ArrayLike, *, base: float | None = None, atol: float = DEFAULT_ATOL) -> float:
    r"""Smallest epsilon for which the channel ``k[x, y]`` is epsilon-locally differentially
    private.

    .. math:: \varepsilon_{\mathrm{LDP}}(k) = \max_{y}\max_{x, x'} \log \frac{k(y|x)}{k(y|x')}

    Columns that are all zero are ignored; a column mixing zero and non-zero entries gives
    ``inf``. Equals the smallest d-privacy epsilon under the discrete metric. Hsu et al. Lemma 1.2
    (an epsilon-lift private P_{S|X} is 2 epsilon-LDP).

    Examples
    --------
    >>> round(ldp_epsilon([[0.75, 0.25], [0.25, 0.75]]), 6)  # log 3
    1.098612
    """
    arr = check_channel(k, atol=atol)
    hi = arr.max(axis=0)
    lo = arr.min(axis=0)
    used = hi > 0
    if not used.any():
        return 0.0
    lo_used = lo[used]
    if float(lo_used.min()) <= 0.0:
        return math.inf
    # log hi - log lo, not log(hi / lo): the ratio overflows for subnormal entries (5e-324)
    return in_base(max(0.0, float((np.log(hi[used]) - np.log(lo_used)).max())), base)
