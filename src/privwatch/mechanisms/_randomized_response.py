"""k-ary randomized response (Warner 1965; Kairouz, Oh, Viswanath 2014)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._validation import check_nonnegative, check_positive_int
from ..exceptions import ValidationError
from ._base import FiniteMechanism, Privacy

__all__ = ["RandomizedResponse"]


class RandomizedResponse(FiniteMechanism):
    r"""Report the observed value with probability :math:`e^\varepsilon / (e^\varepsilon + m - 1)`,
    otherwise one of the other ``m - 1`` values uniformly.

    .. math:: k(y|x) = \frac{e^{\varepsilon}}{e^{\varepsilon} + m - 1}\ (y = x), \qquad
              k(y|x) = \frac{1}{e^{\varepsilon} + m - 1}\ (y \ne x)

    It is exactly ``epsilon``-locally differentially private
    (:func:`privwatch.measures.ldp_epsilon` of its channel is ``epsilon``) and, among
    epsilon-LDP mechanisms on m values, optimal for a range of utilities (Kairouz, Oh,
    Viswanath, "Extremal mechanisms for local differential privacy", 2014). ``epsilon = inf``
    releases the observed value.

    Parameters
    ----------
    epsilon : float
        The local-DP level, in nats (>= 0; ``inf`` allowed).
    n_values : int
        Size m of the observed (= release) alphabet, ``>= 2``; observed values are codes
        ``0 .. m - 1``.

    Examples
    --------
    >>> import math
    >>> rr = RandomizedResponse(math.log(3), n_values=2)
    >>> rr.channel().round(2).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    >>> rr.privacy.measure, round(rr.privacy.value, 6)
    ('ldp_epsilon', 1.098612)
    >>> rr.release([0, 1, 1], rng=0).shape
    (3,)
    """

    def __init__(self, epsilon: float, n_values: int) -> None:
        self.epsilon = check_nonnegative(epsilon, "epsilon", allow_inf=True)
        self.n_values = check_positive_int(n_values, "n_values")
        if self.n_values < 2:
            raise ValidationError(f"`n_values` must be an int >= 2; got {n_values!r}.")

    @property
    def keep_probability(self) -> float:
        """Probability of releasing the observed value, e^eps / (e^eps + m - 1)."""
        if math.isinf(self.epsilon):
            return 1.0
        return 1.0 / (1.0 + (self.n_values - 1) * math.exp(-self.epsilon))

    def channel(self) -> NDArray[np.float64]:
        """The exact ``k[x, y]`` (m x m)."""
        m, keep = self.n_values, self.keep_probability
        k = np.full((m, m), (1.0 - keep) / (m - 1))
        np.fill_diagonal(k, keep)
        return k

    @property
    def privacy(self) -> Privacy:
        """``epsilon``-local differential privacy, guaranteed."""
        return Privacy("ldp_epsilon", self.epsilon, True)

    def __repr__(self) -> str:
        return f"RandomizedResponse(epsilon={self.epsilon!r}, n_values={self.n_values!r})"
