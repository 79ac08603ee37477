"""The watchdog's privacy-utility tradeoff over a range of thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlogy

from .._validation import DEFAULT_ATOL, check_nonnegative, check_pmf
from ..exceptions import ValidationError
from ..joint import encode_sensitive
from ..measures import LeakageReport, nested_leakage_reports
from ._bounds import _gamma
from ._mechanism import _utility
from ._partition import _merged_abs_log_lift, _symbol_risk
from ._records import record_guarantee
from ._relaxed import LIFT_TOL, _cell_abs_log_lift

FloatArray = NDArray[np.float64]

__all__ = ["TradeoffCurve", "record_tradeoff", "tradeoff"]


@dataclass(frozen=True)
class TradeoffCurve:
    """Per threshold epsilon: utility, bounds and leakage of the watchdog release.

    One type for both watchdogs: :func:`tradeoff` (exact, on a pmf over observed symbols) and
    :func:`record_tradeoff` (per-record risk scores, every record its own symbol of mass 1/n).
    Fields (arrays over ``thresholds``): ``utility_mi`` = I(X;Y) (nats), ``nmil``,
    ``gamma_bound`` (Hsu Prop. 2), ``effective_epsilon`` (lift-privacy level of the release),
    ``randomized_epsilon`` (level of the flagged set), ``flagged_probability`` (mass of the
    flagged symbols or records), ``breach_probability`` (Sadeghi eq. 11). ``leakage[i]`` is the
    :class:`~privwatch.measures.LeakageReport` of the joint of sensitive and release at
    ``thresholds[i]`` (merge randomization; every X^c-invariant choice gives the same lift level
    and utility); empty for :func:`record_tradeoff`, which has no pmf.
    """

    thresholds: np.ndarray
    utility_mi: np.ndarray
    nmil: np.ndarray
    gamma_bound: np.ndarray
    effective_epsilon: np.ndarray
    randomized_epsilon: np.ndarray
    flagged_probability: np.ndarray
    breach_probability: np.ndarray
    leakage: list[LeakageReport] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """One row per threshold; leakage measures of the release prefixed ``release_``."""
        names = [f.name for f in fields(self) if f.name != "leakage"]
        frame = pd.DataFrame({name: getattr(self, name) for name in names})
        frame = frame.rename(columns={"thresholds": "threshold"})
        if self.leakage:
            rel = pd.DataFrame([r.to_dict() for r in self.leakage]).drop(columns=["base", "alpha"])
            frame = pd.concat([frame, rel.add_prefix("release_")], axis=1)
        return frame

    def to_dict(self) -> dict[str, list[float]]:
        return {str(k): [float(v) for v in col] for k, col in self.to_frame().items()}


def _curve(rows: list[tuple[float, ...]], leakage: list[LeakageReport]) -> TradeoffCurve:
    c = np.array(rows, dtype=float).reshape(-1, 8).T
    return TradeoffCurve(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], leakage=leakage)


def _thresholds(epsilons: Sequence[float] | np.ndarray) -> list[float]:
    arr = np.asarray(epsilons)
    if arr.dtype.kind not in "biuf":
        raise ValidationError(
            f"`epsilons` must be real numbers; got an array of dtype {arr.dtype}."
        )
    return [check_nonnegative(float(e), "epsilons", allow_inf=True) for e in np.ravel(arr)]


def tradeoff(
    p: ArrayLike,
    epsilons: Sequence[float] | np.ndarray,
    *,
    alpha: float = 2.0,
    atol: float = DEFAULT_ATOL,
) -> TradeoffCurve:
    """Compute the watchdog tradeoff curve of ``p[s, x]`` over the thresholds ``epsilons``.

    Utility is I(X;Y) of Hsu et al. eq. (11) and NMIL (Sadeghi eq. 9); privacy is reported as the
    gamma bound (Hsu Prop. 2), the optimal level (Sadeghi Cor. 1), and every measure of
    :mod:`privwatch.measures` computed exactly on the joint of S and the release.

    Examples
    --------
    >>> c = tradeoff([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]], [0.5, 1.0])
    >>> c.effective_epsilon.round(4).tolist(), c.nmil.round(4).tolist()
    ([0.0, 0.6931], [0.5256, 0.0])
    """
    arr = check_pmf(p, atol=atol)
    eps_list = _thresholds(epsilons)
    risk = _symbol_risk(arr)  # one pass; each epsilon only re-thresholds it
    p_x, p_s = arr.sum(axis=0), arr.sum(axis=1)
    xlogx = np.asarray(xlogy(p_x, p_x), dtype=np.float64)  # _utility's terms, once
    kept_breach = _KeptBreach(arr, p_s, risk)
    rows: list[tuple[float, ...]] = []
    for eps in eps_list:
        keep = risk <= eps
        util = _utility(p_x, keep, xlogx)
        kept_level = float(risk[keep].max()) if keep.any() else 0.0
        # the flagged set's column P(s, X^c), shared by its level and its breach (Sadeghi
        # eq. (2), (10)); the same sums as _effective_level's and _breach's
        found = _merged_abs_log_lift(arr[:, ~keep].sum(axis=1), p_s) if (~keep).any() else None
        randomized = 0.0 if found is None else float(found[1].max())
        set_breach = 0.0 if found is None else float(found[0][found[1] > eps + LIFT_TOL].sum())
        breach = kept_breach(keep, eps) + set_breach
        rows.append((eps, util.utility_mi, util.nmil, _gamma(p_x, keep, eps),
                     max(kept_level, randomized), randomized, util.flagged_probability,
                     breach))  # fmt: skip
    # the merged releases' reports: the kept sets {risk <= eps} are nested, so every report is
    # a running sum over the columns ranked by risk (one pass, not one report per threshold)
    order = np.argsort(risk, kind="stable")
    counts = np.searchsorted(risk[order], np.asarray(eps_list, dtype=np.float64), side="right")
    reports = nested_leakage_reports(arr, order, counts, alpha=alpha, atol=atol)
    return _curve(rows, reports)


class _KeptBreach:
    """The kept symbols' part of eq. (11), sum over kept x of delta({x}) at each threshold, as
    :func:`_breach` computes it, with each cell's |log-lift| computed once. A kept symbol x has
    risk(x) <= eps, so only a cell with |i(s, x)| > risk(x) + tol can ever breach (in float
    arithmetic too: eps >= risk(x) gives eps + tol >= risk(x) + tol); the other cells are
    never summed (nor cells of zero mass), and the sums of the rest are the same as
    :func:`_singleton_breach`'s. Such a cell needs a product p(s) p(x) that underflows (the
    risk itself is computed as (p / p(x)) / p(s)); usually there is none."""

    def __init__(self, p: FloatArray, p_s: FloatArray, risk: FloatArray) -> None:
        ll, mass = _cell_abs_log_lift(p, p_s)
        self.live = np.flatnonzero(((ll > risk[None, :] + LIFT_TOL) & (mass > 0)).any(axis=0))
        self.ll, self.mass, self.n = ll[:, self.live], mass[:, self.live], p.shape[1]

    def __call__(self, keep: NDArray[np.bool_], eps: float) -> float:
        single = np.zeros(self.n)
        if self.live.size:
            single[self.live] = np.where(self.ll > eps + LIFT_TOL, self.mass, 0.0).sum(axis=0)
        return float(single[keep].sum())


def record_tradeoff(
    risk: ArrayLike, sensitive: ArrayLike, epsilons: Sequence[float] | np.ndarray
) -> TradeoffCurve:
    r"""Watchdog tradeoff from per-record risk scores, every record its own symbol (mass 1/n).

    ``risk[i]`` is record i's (estimated) :math:`\max_s |i(s, x_i)|` (nats, e.g.
    :meth:`Watchdog.score_samples`), ``sensitive[i]`` its sensitive label. For each threshold:
    the flagged fraction, the utility I(X;Y) of Hsu et al. eq. (11) with
    :math:`P_X(x_i) = 1/n` (so :math:`H_{\mathcal{X}_\varepsilon} = (k/n)\log n` for k kept
    records), the gamma bound of Prop. 2, and the levels of the record-level guarantee
    (:class:`Guarantee`: kept level from the scores, randomized level from the labels of the
    flagged records). This is how the tradeoff is drawn from a learned log-lift estimator, whose
    records have no shared symbols.

    Examples
    --------
    >>> c = record_tradeoff([0.1, 0.2, 0.9, 1.5], ["a", "b", "a", "b"], [0.5])
    >>> c.flagged_probability.tolist(), c.utility_mi.round(3).tolist(), c.gamma_bound.round(3)
    ([0.5], [1.04], array([1.294]))
    """
    r = _risk_vector(risk)
    s_codes = _record_labels(sensitive, r.size)
    n_s = int(s_codes.max()) + 1
    p_x = np.full(r.size, 1.0 / r.size)
    rows: list[tuple[float, ...]] = []
    for eps in _thresholds(epsilons):
        keep, g, util = record_guarantee(r, s_codes, n_s, eps, "record scores")
        rows.append((eps, util.utility_mi, util.nmil, _gamma(p_x, keep, eps),
                     g.effective_epsilon, g.randomized_epsilon, g.flagged_probability,
                     g.breach_probability))  # fmt: skip
    return _curve(rows, [])


def _risk_vector(risk: ArrayLike) -> NDArray[np.float64]:
    raw = np.asarray(risk)
    if raw.dtype.kind not in "biuf":
        raise ValidationError(f"`risk` must be real numbers; got an array of dtype {raw.dtype}.")
    r = np.asarray(raw, dtype=np.float64)
    if r.ndim != 1 or r.size == 0:
        raise ValidationError(f"`risk` must be a non-empty vector; got shape {r.shape}.")
    if np.isnan(r).any() or (r < 0).any():
        bad = r[np.isnan(r) | (r < 0)][0]
        raise ValidationError(f"`risk` must hold non-negative scores (inf allowed); got {bad}.")
    return r


def _record_labels(sensitive: ArrayLike, n: int) -> NDArray[np.int64]:
    arr = np.asarray(sensitive)
    if arr.ndim != 1 or len(arr) != n:
        raise ValidationError(
            f"`sensitive` must be one label per risk score ({n}); got shape {arr.shape}."
        )
    if arr.dtype.kind == "c":
        raise ValidationError(f"`sensitive` must hold labels, not complex numbers; got {arr[0]!r}.")
    try:
        codes, _ = encode_sensitive(pd.Series(arr), "sensitive")
    except TypeError as err:  # unorderable labels (mixed objects)
        raise ValidationError(f"`sensitive` must hold sortable labels; got {err}.") from None
    return codes
