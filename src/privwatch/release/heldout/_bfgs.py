"""BFGS for the prior's many small fits, without scipy's per-evaluation wrappers.

The held-out model fits G by BFGS hundreds of times per table (:func:`~._prior._fit_alpha`:
per fold, candidate, size stratum and bootstrap refit), each on a few dozen coefficients,
so ``scipy.optimize.minimize``'s bookkeeping per evaluation (the ``ScalarFunction`` and
``MemoizeJac`` wrappers: copies, equality checks, counters) costs about a third of the fit.
:func:`minimize_bfgs` is the same algorithm with the same floating-point operations as
scipy's ``_minimize_bfgs`` (Nocedal & Wright 2006, algorithm 6.1; inverse-Hessian update
H <- (I - rho s y') H (I - rho y s') + rho s s', rho = 1 / y's; the Wolfe line search of
Moré & Thuente 1994, scipy's own ``_line_search_wolfe12``), with the options the fits use
(gradient sup-norm below ``gtol``, ``xrtol`` 0, c1 1e-4, c2 0.9): the same iterates, bit for
bit (tests/release/test_prior_fits.py). Where scipy's line search cannot be imported, it is
``minimize(method="BFGS")`` itself.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

try:  # scipy's own line search (a private name: a scipy without it gets minimize itself)
    from scipy.optimize._optimize import _line_search_wolfe12, _LineSearchError
except ImportError:  # pragma: no cover - depends on the scipy release
    _line_search_wolfe12 = None

__all__ = ["minimize_bfgs"]

FloatArray = NDArray[np.float64]
Objective = Callable[[FloatArray], tuple[float, FloatArray]]


def minimize_bfgs(fun: Objective, x0: FloatArray, gtol: float, maxiter: int) -> FloatArray:
    """The minimiser found by BFGS of ``fun`` (value and gradient) from ``x0``: the ``x`` of
    ``minimize(fun, x0, jac=True, method="BFGS", options={"gtol": gtol, "maxiter":
    maxiter})``, the same floats."""
    if _line_search_wolfe12 is None:  # pragma: no cover
        opts = {"gtol": gtol, "maxiter": maxiter}
        return np.asarray(minimize(fun, x0, jac=True, method="BFGS", options=opts).x)
    last: list[tuple[FloatArray, float, FloatArray]] = []

    def f(x: FloatArray) -> float:
        value, grad = fun(np.copy(x))
        last[:] = [(np.copy(x), float(value), grad)]
        return float(value)

    def fprime(x: FloatArray) -> FloatArray:
        if not last or not np.array_equal(x, last[0][0]):
            f(x)
        return last[0][2]

    xk = np.asarray(x0).flatten().astype(float)
    old_fval = f(xk)
    gfk = fprime(xk)
    eye = np.eye(len(xk), dtype=int)
    hk: NDArray[np.float64] | NDArray[np.int_] = eye
    old_old_fval = old_fval + np.linalg.norm(gfk) / 2  # the first step's length ~1
    gnorm = np.amax(np.abs(gfk))
    k = 0
    while gnorm > gtol and k < maxiter:
        pk = -np.dot(hk, gfk)
        try:
            alpha_k, _, _, old_fval, old_old_fval, gfkp1 = _line_search_wolfe12(
                f, fprime, xk, pk, gfk, old_fval, old_old_fval,
                amin=1e-100, amax=1e100, c1=1e-4, c2=0.9,
            )  # fmt: skip
        except _LineSearchError:
            break
        sk = alpha_k * pk
        xk = xk + sk
        if gfkp1 is None:
            gfkp1 = fprime(xk)
        yk = gfkp1 - gfk
        gfk = gfkp1
        k += 1
        gnorm = np.amax(np.abs(gfk))
        if gnorm <= gtol:
            break
        if alpha_k * _norm(pk) <= 0 * (0 + _norm(xk)):  # scipy's step test, its xrtol 0
            break
        if not np.isfinite(old_fval):
            break
        rhok_inv = np.dot(yk, sk)
        rhok = 1000.0 if rhok_inv == 0.0 else 1.0 / rhok_inv
        a1 = eye - sk[:, None] * yk[None, :] * rhok
        a2 = eye - yk[:, None] * sk[None, :] * rhok
        hk = np.dot(a1, np.dot(hk, a2)) + (rhok * sk[:, None] * sk[None, :])
    return np.asarray(xk, dtype=float)


def _norm(x: FloatArray) -> float:
    """scipy's ``vecnorm(x, ord=2)``, the same expression."""
    return float(np.sum(np.abs(x) ** 2, axis=0) ** (1.0 / 2))
