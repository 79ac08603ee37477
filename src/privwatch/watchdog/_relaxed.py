"""Probabilistic (epsilon, delta)-log-lift privacy and the greedy Algorithm 1 of Sadeghi et al."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    DEFAULT_ATOL,
    check_mask,
    check_nonnegative,
    check_pmf,
    check_probability,
)
from ..measures._common import marginals
from ._mechanism import _effective_level, _utility
from ._partition import _set_abs_log_lift, _symbol_risk, partition

__all__ = ["RelaxedWatchdogResult", "breach_probability", "relaxed_watchdog"]

FloatArray = NDArray[np.float64]


def _set_breach(p: FloatArray, p_s: FloatArray, cols: NDArray[np.bool_], eps: float) -> float:
    found = _set_abs_log_lift(p, p_s, cols)
    if found is None:
        return 0.0
    joint, abs_ll = found
    return float(joint[abs_ll > eps].sum())


def _singleton_breach(p: FloatArray, p_s: FloatArray, eps: float) -> FloatArray:
    p_x = p.sum(axis=0)
    rows = p_s > 0
    denom = p_s[rows, None] * np.where(p_x > 0, p_x, 1.0)[None, :]
    with np.errstate(divide="ignore"):
        ll = np.abs(np.log(p[rows] / denom))
    return np.asarray(np.where(ll > eps, p[rows], 0.0).sum(axis=0), dtype=np.float64)


def _breach(
    p: FloatArray, keep: NDArray[np.bool_], eps: float, single: FloatArray | None = None
) -> float:
    """Eq. (11); ``single`` is :func:`_singleton_breach` when the caller already has it."""
    p_s, _ = marginals(p)
    single = _singleton_breach(p, p_s, eps) if single is None else single
    kept = float(single[keep].sum())
    return kept + (_set_breach(p, p_s, ~keep, eps) if (~keep).any() else 0.0)


def breach_probability(
    p: ArrayLike, mask: ArrayLike, epsilon: float, *, atol: float = DEFAULT_ATOL
) -> float:
    r"""Probability that the release breaches epsilon-log-lift privacy, for a bi-partition.

    .. math:: \delta_\varepsilon(\mathcal{A}) = \sum_s P_{S,X}(s, \mathcal{A})\,
              \mathbb{1}\{|i(s, \mathcal{A})| > \varepsilon\}, \qquad
              \delta = \sum_{x \in \mathcal{X}_\varepsilon} \delta_\varepsilon(\{x\})
              + \delta_\varepsilon(\mathcal{X}^c_\varepsilon)

    Sadeghi et al. eq. (10)–(11): released symbols are judged on their own log-lift, the
    randomized (merged) set on its subset log-lift. ``mask`` is True for released symbols.

    Examples
    --------
    >>> p = [[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]]
    >>> round(breach_probability(p, [True, True, True], 0.5), 4)  # release X as is
    0.2
    >>> breach_probability(p, [False, False, True], 0.5)
    0.0
    """
    arr = check_pmf(p, atol=atol)
    keep = check_mask(mask, arr.shape[1])
    eps = check_nonnegative(epsilon, "epsilon", allow_inf=True)
    return _breach(arr, keep, eps)


@dataclass(frozen=True)
class RelaxedWatchdogResult:
    """Output of :func:`relaxed_watchdog`.

    ``mask`` is True for released symbols; ``breach_probability`` and ``max_abs_log_lift`` are
    those of the release (Sadeghi eq. 11 and the effective level); ``satisfied`` says whether
    both conditions (<= delta, <= epsilon_max) hold; ``exempted`` lists the symbols moved back
    from the flagged set, in the order they were moved.
    """

    mask: NDArray[np.bool_]
    epsilon: float
    delta: float
    epsilon_max: float
    breach_probability: float
    max_abs_log_lift: float
    nmil: float
    mutual_information: float
    strict_nmil: float
    satisfied: bool
    exempted: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "epsilon_max": self.epsilon_max,
            "breach_probability": self.breach_probability,
            "max_abs_log_lift": self.max_abs_log_lift,
            "nmil": self.nmil,
            "mutual_information": self.mutual_information,
            "strict_nmil": self.strict_nmil,
            "satisfied": self.satisfied,
            "n_released": int(self.mask.sum()),
            "exempted": list(self.exempted),
        }


def relaxed_watchdog(
    p: ArrayLike,
    epsilon: float,
    delta: float,
    epsilon_max: float = math.inf,
    *,
    atol: float = DEFAULT_ATOL,
) -> RelaxedWatchdogResult:
    r"""Greedy (epsilon, delta)-log-lift watchdog: Sadeghi et al. Algorithm 1.

    1. Start from the strict partition :math:`(\mathcal{X}_\varepsilon, \mathcal{X}^c_\varepsilon)`.
    2. Refine the candidates (eq. 14): keep the flagged x with
       :math:`\delta_\varepsilon(\{x\}) \le \delta` and :math:`\omega(x) \le \varepsilon_{\max}`.
    3. Visit them in increasing order of :math:`\delta_\varepsilon(\{x\})` and exempt x (release
       it unchanged) when the new bi-partition keeps the breach probability (eq. 11)
       :math:`\le \delta`, the effective max |log-lift| :math:`\le \varepsilon_{\max}`, and does not
       worsen NMIL. A candidate that fails is skipped and the scan goes on.

    The conditions are checked on the whole bi-partition after each move, so the output satisfies
    them whenever the strict partition does (``satisfied`` reports it in every case), and its
    NMIL is never worse than the strict watchdog's.

    Examples
    --------
    >>> r = relaxed_watchdog([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]], 0.5, 0.3)
    >>> r.mask, round(r.breach_probability, 2), r.nmil < r.strict_nmil
    (array([ True,  True,  True]), 0.2, True)
    """
    arr = check_pmf(p, atol=atol)
    eps = check_nonnegative(epsilon, "epsilon", allow_inf=True)
    dlt = check_probability(delta, "delta")
    eps_max = check_nonnegative(epsilon_max, "epsilon_max", allow_inf=True)
    p_s, p_x = marginals(arr)
    keep = partition(arr, eps)
    strict = _utility(p_x, keep)
    single = _singleton_breach(arr, p_s, eps)
    risk = _symbol_risk(arr)
    candidates = np.flatnonzero(~keep & (single <= dlt) & (risk <= eps_max))
    candidates = candidates[np.argsort(single[candidates], kind="stable")]
    current_nmil = strict.nmil
    exempted: list[int] = []
    for x in candidates:
        trial = keep.copy()
        trial[x] = True
        if _breach(arr, trial, eps, single) > dlt + 1e-12:
            continue
        if _effective_level(arr, trial, risk)[1] > eps_max:
            continue
        trial_nmil = _utility(p_x, trial).nmil
        if trial_nmil > current_nmil + 1e-15:
            continue
        keep, current_nmil = trial, trial_nmil
        exempted.append(int(x))
    breach = _breach(arr, keep, eps, single)
    level = _effective_level(arr, keep, risk)[1]
    util = _utility(p_x, keep)
    return RelaxedWatchdogResult(
        mask=keep,
        epsilon=eps,
        delta=dlt,
        epsilon_max=eps_max,
        breach_probability=breach,
        max_abs_log_lift=level,
        nmil=util.nmil,
        mutual_information=util.mutual_information,
        strict_nmil=strict.nmil,
        satisfied=bool(breach <= dlt + 1e-12 and level <= eps_max),
        exempted=exempted,
    )
