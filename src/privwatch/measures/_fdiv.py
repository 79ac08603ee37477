"""f-information: the f-divergence between the joint and the product of its marginals."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import xlogy

from .._validation import DEFAULT_ATOL, check_pmf
from ..exceptions import ValidationError
from ._common import FloatArray, raw_lift

__all__ = ["F_FUNCTIONS", "f_information"]

FFunction = Callable[[FloatArray], FloatArray]


def _kl(t: FloatArray) -> FloatArray:
    return np.asarray(xlogy(t, t))


def _chi2(t: FloatArray) -> FloatArray:
    return (t - 1.0) ** 2


def _tv(t: FloatArray) -> FloatArray:
    return 0.5 * np.abs(t - 1.0)


def _hellinger(t: FloatArray) -> FloatArray:
    return (np.sqrt(t) - 1.0) ** 2


#: The named generators: ``kl`` t log t (mutual information, nats), ``chi2`` (t - 1)^2,
#: ``tv`` |t - 1| / 2 (total variation), ``hellinger`` (sqrt(t) - 1)^2 (squared Hellinger,
#: without the factor 1/2).
F_FUNCTIONS: dict[str, FFunction] = {
    "kl": _kl,
    "chi2": _chi2,
    "tv": _tv,
    "hellinger": _hellinger,
}


def resolve_f(f: str | FFunction) -> FFunction:
    """Return the generator for a name of :data:`F_FUNCTIONS` or check a callable."""
    if isinstance(f, str):
        try:
            return F_FUNCTIONS[f]
        except KeyError:
            names = ", ".join(repr(n) for n in F_FUNCTIONS)
            raise ValidationError(f"`f` must be one of {names} or a callable; got {f!r}.") from None
    if not callable(f):
        raise ValidationError(f"`f` must be one of the names or a callable; got {f!r}.")
    at_one = float(np.asarray(f(np.ones(1)), dtype=float).reshape(-1)[0])
    if not math.isfinite(at_one) or abs(at_one) > 1e-9:
        raise ValidationError(f"`f` must satisfy f(1) = 0; got f(1) = {at_one!r}.")
    return f


def f_information(p: ArrayLike, f: str | FFunction = "kl", *, atol: float = DEFAULT_ATOL) -> float:
    r"""f-information between S and X: the f-divergence of the joint from the product.

    .. math:: I_f(S;X) = D_f(P_{S,X} \| P_S P_X)
              = \sum_{s,x} p(s)\,p(x)\, f\!\left(\frac{p(s,x)}{p(s)\,p(x)}\right)

    Hsu et al. eq. (2)–(3); Prop. 1.3 bounds it by :math:`\max_{e^{-\varepsilon} \le t \le
    e^{\varepsilon}} f(t)`. ``f`` is a name of :data:`F_FUNCTIONS` or a convex vectorised callable
    with ``f(1) = 0`` (it must accept 0, the lift of an impossible cell). Units follow ``f``
    (``"kl"`` gives nats). Lifts beyond the float64 range (marginals below ~1e-154) overflow
    to ``inf``; :func:`mutual_information` handles them in the log domain.

    Examples
    --------
    >>> round(f_information([[0.5, 0.0], [0.0, 0.5]], "tv"), 12)
    0.5
    """
    return _f_information_of_lift(raw_lift(check_pmf(p, atol=atol)), f)


def _f_information_of_lift(
    lifted: tuple[FloatArray, FloatArray, FloatArray], f: str | FFunction
) -> float:
    """:func:`f_information` from ``raw_lift`` of a checked pmf (not modified): the leakage
    report computes the lift once for its four f-informations (the same values)."""
    gen = resolve_f(f)
    lift, p_s, p_x = lifted
    rows, cols = p_s > 0, p_x > 0
    if not (rows.all() and cols.all()):
        lift, p_s, p_x = lift[rows][:, cols], p_s[rows], p_x[cols]
    values = np.asarray(gen(lift), dtype=np.float64)
    if values.shape != lift.shape:
        raise ValidationError(
            f"`f` must be vectorised (return an array shaped like its input); got shape "
            f"{values.shape} for input {lift.shape}."
        )
    if np.isnan(values).any():
        raise ValidationError("`f` must return numbers for every lift in [0, inf); got NaN.")
    value = float(p_s @ values @ p_x)
    if isinstance(f, str):
        # The named generators are convex with f(1) = 0, so I_f >= 0 by Jensen's inequality;
        # a rounding residue such as -5.7e-17 is reported as the exact 0 it stands for.
        value = max(0.0, value)
    return value
