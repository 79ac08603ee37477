"""Probabilistic (epsilon, delta)-log-lift privacy and the greedy Algorithm 1 of Sadeghi et al."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlogy

from .._validation import (
    DEFAULT_ATOL,
    check_mask,
    check_nonnegative,
    check_pmf,
    check_probability,
)
from ._mechanism import _effective_level, _utility
from ._partition import _set_abs_log_lift, _symbol_risk, partition

__all__ = ["RelaxedWatchdogResult", "breach_probability", "relaxed_watchdog"]

FloatArray = NDArray[np.float64]


#: A log-lift within this of epsilon is not a breach (float noise: a lift of exactly 1 can come
#: out as 1 + 2e-16, which at epsilon = 0 used to count every record as a breach).
LIFT_TOL = 1e-12


def _set_breach(p: FloatArray, p_s: FloatArray, cols: NDArray[np.bool_], eps: float) -> float:
    found = _set_abs_log_lift(p, p_s, cols)
    if found is None:
        return 0.0
    joint, abs_ll = found
    return float(joint[abs_ll > eps + LIFT_TOL].sum())


def _cell_abs_log_lift(p: FloatArray, p_s: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(|i(s, x)|, P(s, x))`` of every cell, over sensitive values of positive probability."""
    p_x = p.sum(axis=0)
    rows = p_s > 0
    denom = p_s[rows, None] * np.where(p_x > 0, p_x, 1.0)[None, :]
    with np.errstate(divide="ignore"):
        ll = np.abs(np.log(p[rows] / denom))
    return ll, p[rows]


def _singleton_breach(p: FloatArray, p_s: FloatArray, eps: float) -> FloatArray:
    ll, mass = _cell_abs_log_lift(p, p_s)
    return np.asarray(np.where(ll > eps + LIFT_TOL, mass, 0.0).sum(axis=0), dtype=np.float64)


def _breach(
    p: FloatArray, keep: NDArray[np.bool_], eps: float, single: FloatArray | None = None
) -> float:
    """Eq. (11); ``single`` is :func:`_singleton_breach` when the caller already has it."""
    p_s = p.sum(axis=1)
    single = _singleton_breach(p, p_s, eps) if single is None else single
    kept = float(single[keep].sum())
    return kept + (_set_breach(p, p_s, ~keep, eps) if (~keep).any() else 0.0)


def breach_probability(
    p: ArrayLike, keep: ArrayLike, epsilon: float, *, atol: float = DEFAULT_ATOL
) -> float:
    r"""Probability that the release breaches epsilon-log-lift privacy, for a bi-partition.

    .. math:: \delta_\varepsilon(\mathcal{A}) = \sum_s P_{S,X}(s, \mathcal{A})\,
              \mathbb{1}\{|i(s, \mathcal{A})| > \varepsilon\}, \qquad
              \delta = \sum_{x \in \mathcal{X}_\varepsilon} \delta_\varepsilon(\{x\})
              + \delta_\varepsilon(\mathcal{X}^c_\varepsilon)

    Sadeghi et al. eq. (10)–(11): released symbols are judged on their own log-lift, the
    randomized (merged) set on its subset log-lift. ``keep`` is True for released symbols.

    Examples
    --------
    >>> p = [[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]]
    >>> round(breach_probability(p, [True, True, True], 0.5), 4)  # release X as is
    0.2
    >>> breach_probability(p, [False, False, True], 0.5)
    0.0
    """
    arr = check_pmf(p, atol=atol)
    released = check_mask(keep, arr.shape[1], "keep")
    eps = check_nonnegative(epsilon, "epsilon", allow_inf=True)
    return _breach(arr, released, eps)


def _two_sum(hi: float, lo: float, add: float) -> tuple[float, float]:
    """(hi, lo) + add as a new unevaluated pair (Knuth's TwoSum): no rounding error is lost."""
    s = hi + add
    b = s - hi
    return s, lo + ((hi - (s - b)) + (add - b))


def _greedy_scan(
    p: FloatArray,
    p_s: FloatArray,
    p_x: FloatArray,
    keep: NDArray[np.bool_],
    candidates: NDArray[np.intp],
    single: FloatArray,
    risk: FloatArray,
    eps: float,
    dlt: float,
    eps_max: float,
    strict_nmil: float,
) -> list[int]:
    r"""Step 3 of Algorithm 1 in O(|S|) per candidate instead of O(|S| |X|).

    The state of the bi-partition (the column sums :math:`P(s, \mathcal{X}^c)`, the flagged
    mass, the kept singleton breach, the kept entropy and the kept level) is updated by each
    accepted move instead of being re-summed over the alphabet. The running sums are kept as
    unevaluated pairs of floats (Knuth's TwoSum, compensated summation), so the rounding error
    does not build up over a million moves. Each trial checks the three conditions of the
    definition.
    """
    rows = np.flatnonzero(p_s > 0)
    ps_rows = p_s[rows].tolist()
    flagged = ~keep
    neg_ent = -xlogy(p_x, p_x)
    # each running sum is an unevaluated pair (hi, lo): exact up to one final rounding
    cols = [(math.fsum(p[r, flagged].tolist()), 0.0) for r in rows.tolist()]
    mass = (math.fsum(p_x[flagged].tolist()), 0.0)
    kept_ent = (math.fsum(neg_ent[keep].tolist()), 0.0)
    kept_single = (math.fsum(single[keep].tolist()), 0.0)
    kept_level = float(risk[keep].max()) if keep.any() else 0.0
    n_flagged = int(flagged.sum())
    h = float(neg_ent.sum())
    current_nmil = strict_nmil
    sub = (-p[rows][:, candidates].T).tolist()
    cand = candidates.tolist()
    single_c, risk_c = single[candidates].tolist(), risk[candidates].tolist()
    px_c, ent_c = (-p_x[candidates]).tolist(), neg_ent[candidates].tolist()
    log, inf, limit = math.log, math.inf, dlt + 1e-12
    exempted: list[int] = []
    for i, x in enumerate(cand):
        trial_single = _two_sum(*kept_single, single_c[i])
        breach = trial_single[0] + trial_single[1]
        if breach > limit:  # the randomized set only adds to it
            continue
        trial_cols = [_two_sum(hi, lo, d) for (hi, lo), d in zip(cols, sub[i], strict=True)]
        randomized_level = 0.0
        if n_flagged > 1:
            joint = [hi + lo for hi, lo in trial_cols]
            p_a = math.fsum(joint)
            if p_a > 0:
                for j_s, ps in zip(joint, ps_rows, strict=True):
                    ll = abs(log(j_s / (ps * p_a))) if j_s > 0 else inf
                    if ll > eps + LIFT_TOL:
                        breach += j_s
                    if ll > randomized_level:
                        randomized_level = ll
        if breach > limit:
            continue
        level_x = risk_c[i]
        if max(kept_level, level_x, randomized_level) > eps_max:
            continue
        trial_mass = _two_sum(*mass, px_c[i])
        trial_ent = _two_sum(*kept_ent, ent_c[i])
        m = trial_mass[0] + trial_mass[1]
        info = (trial_ent[0] + trial_ent[1]) - (m * log(m) if m > 0 else 0.0)
        trial_nmil = 0.0 if h <= 0 else 1.0 - min(max(info, 0.0), h) / h
        if trial_nmil > current_nmil + 1e-15:
            continue
        cols, kept_single, current_nmil = trial_cols, trial_single, trial_nmil
        mass, kept_ent = trial_mass, trial_ent
        kept_level = max(kept_level, level_x)
        n_flagged -= 1
        exempted.append(x)
    return exempted


@dataclass(frozen=True)
class RelaxedWatchdogResult:
    """Output of :func:`relaxed_watchdog`.

    ``keep`` is True for released symbols; ``breach_probability`` and ``effective_epsilon`` are
    those of the release (Sadeghi eq. 11 and the lift-privacy level); ``threshold``, ``delta``
    and ``epsilon_max`` echo the arguments; ``utility_mi`` and ``nmil`` are the release's
    utility, ``strict_nmil`` the strict watchdog's; ``satisfied`` says whether
    both conditions (<= delta, <= epsilon_max) hold; ``exempted`` lists the symbols moved back
    from the flagged set, in the order they were moved.
    """

    keep: NDArray[np.bool_]
    threshold: float
    delta: float
    epsilon_max: float
    breach_probability: float
    effective_epsilon: float
    nmil: float
    utility_mi: float
    strict_nmil: float
    satisfied: bool
    exempted: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "threshold": self.threshold,
            "delta": self.delta,
            "epsilon_max": self.epsilon_max,
            "breach_probability": self.breach_probability,
            "effective_epsilon": self.effective_epsilon,
            "nmil": self.nmil,
            "utility_mi": self.utility_mi,
            "strict_nmil": self.strict_nmil,
            "satisfied": self.satisfied,
            "n_released": int(self.keep.sum()),
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
    >>> r.keep, round(r.breach_probability, 2), r.nmil < r.strict_nmil
    (array([ True,  True,  True]), 0.2, True)
    """
    arr = check_pmf(p, atol=atol)
    eps = check_nonnegative(epsilon, "epsilon", allow_inf=True)
    dlt = check_probability(delta, "delta")
    eps_max = check_nonnegative(epsilon_max, "epsilon_max", allow_inf=True)
    p_s, p_x = arr.sum(axis=1), arr.sum(axis=0)
    keep = partition(arr, eps)
    strict = _utility(p_x, keep)
    single = _singleton_breach(arr, p_s, eps)
    risk = _symbol_risk(arr)
    candidates = np.flatnonzero(~keep & (single <= dlt) & (risk <= eps_max))
    candidates = candidates[np.argsort(single[candidates], kind="stable")]
    exempted = _greedy_scan(
        arr, p_s, p_x, keep, candidates, single, risk, eps, dlt, eps_max, strict.nmil
    )
    keep = keep.copy()
    keep[exempted] = True
    breach = _breach(arr, keep, eps, single)
    level = _effective_level(arr, keep, risk)[1]
    util = _utility(p_x, keep)
    return RelaxedWatchdogResult(
        keep=keep,
        threshold=eps,
        delta=dlt,
        epsilon_max=eps_max,
        breach_probability=breach,
        effective_epsilon=level,
        nmil=util.nmil,
        utility_mi=util.utility_mi,
        strict_nmil=strict.nmil,
        satisfied=bool(breach <= dlt + 1e-12 and level <= eps_max),
        exempted=[int(x) for x in exempted],
    )
