"""Intervals on the plug-in estimates: Miller-Madow mutual information with a bootstrap interval,
and the lift of each observed tuple with an exact (Clopper-Pearson) binomial interval."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import betaincinv  # the Beta quantile (scipy.stats.beta.ppf's own)

from .._memory import check_allocation
from .._rng import RNGLike, check_rng
from .._validation import check_open_fraction, check_positive_int
from ..exceptions import ValidationError
from ..measures import mutual_information

__all__ = ["MutualInformationEstimate", "lift_intervals", "miller_madow_mutual_information"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class MutualInformationEstimate:
    """Plug-in and bias-corrected I(S;X) in nats, with a percentile bootstrap interval of the
    corrected estimate at confidence ``level``."""

    plugin: float
    miller_madow: float
    lower: float
    upper: float
    level: float
    n_bootstrap: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Counts up to this total are exact in float64 and in the int64 multinomial draws.
MAX_TOTAL = 2**53


def _check_counts(counts: ArrayLike) -> NDArray[np.int64]:
    raw = np.asarray(counts)
    if raw.dtype.kind not in "biuf":
        raise ValidationError(
            f"`counts` must be a 2-D array of non-negative whole numbers n[s, x]; got dtype "
            f"{raw.dtype}."
        )
    arr = raw.astype(np.float64)
    bad = arr.ndim != 2 or arr.size == 0 or not np.isfinite(arr).all() or (arr < 0).any()
    if bad or not arr.any():
        raise ValidationError(
            f"`counts` must be a non-empty 2-D array of finite non-negative counts n[s, x] with "
            f"a positive total; got shape {arr.shape}."
        )
    if float(arr.max()) > MAX_TOTAL / arr.size:  # the total could exceed 2**53 (or overflow)
        raise ValidationError(
            f"`counts` must total at most 2**53 (exact whole numbers); got a largest entry of "
            f"{float(arr.max()):.3g} in {arr.size} cells."
        )
    if not np.allclose(arr, np.round(arr)):
        raise ValidationError("`counts` must hold whole numbers (counts n[s, x]).")
    return np.asarray(np.round(arr), dtype=np.int64)


def _mm(counts: NDArray[np.int64]) -> float:
    n = counts.sum()
    m_sx = np.count_nonzero(counts)
    m_s = np.count_nonzero(counts.sum(axis=1))
    m_x = np.count_nonzero(counts.sum(axis=0))
    plugin = float(mutual_information(counts / n))
    return float(plugin + (m_s + m_x - m_sx - 1) / (2.0 * n))


def miller_madow_mutual_information(
    counts: ArrayLike, *, level: float = 0.9, n_bootstrap: int = 200, rng: RNGLike = None
) -> MutualInformationEstimate:
    r"""I(S;X) from counts ``n[s, x]`` with the Miller-Madow bias correction.

    .. math:: \hat I_{MM} = \hat I_{plug-in} + \frac{m_S + m_X - m_{SX} - 1}{2n}

    (each entropy's :math:`\hat H + (m - 1)/(2n)`, m the number of occupied cells; Miller 1955,
    Paninski 2003 eq. 4). The interval is the percentile interval of :math:`\hat I_{MM}` over
    ``n_bootstrap`` multinomial resamples of the counts.

    Examples
    --------
    >>> est = miller_madow_mutual_information([[40, 10], [10, 40]], rng=0)
    >>> round(est.plugin, 4), round(est.miller_madow, 4)
    (0.1927, 0.1877)
    """
    c = _check_counts(counts)
    check_open_fraction(level, "level")
    check_positive_int(n_bootstrap, "n_bootstrap")
    check_allocation("n_bootstrap", (n_bootstrap, c.size), np.int64)
    n = int(c.sum())
    p = (c / n).ravel()
    draws = check_rng(rng).multinomial(n, p, size=n_bootstrap).reshape(n_bootstrap, *c.shape)
    reps = np.array([_mm(d) for d in draws])
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return MutualInformationEstimate(
        plugin=float(mutual_information(c / n)),
        miller_madow=_mm(c),
        lower=float(lo),
        upper=float(hi),
        level=level,
        n_bootstrap=n_bootstrap,
    )


def lift_intervals(counts: ArrayLike, level: float = 0.9) -> dict[str, FloatArray]:
    r"""Plug-in log-lift of each (s, x) with an exact binomial (Clopper-Pearson) interval.

    Given the n(x) records of tuple x, n(s, x) is Binomial(n(x), P(s|x)); the interval of
    P(s|x) is :math:`[B_{\alpha/2}(k, n-k+1),\ B_{1-\alpha/2}(k+1, n-k)]` (B the Beta
    quantile, k = n(s, x), n = n(x)), divided by :math:`\hat P(s) = n(s)/n` (whose error is
    much smaller: it uses every record). Returns arrays ``log_lift``, ``lower``, ``upper`` of
    shape (|X|, |S|) (rows = observed tuples; unseen tuples NaN) and ``n_x``.

    Examples
    --------
    >>> out = lift_intervals([[8, 2], [2, 8]], level=0.9)
    >>> bool(out["lower"][0, 0] < out["log_lift"][0, 0] < out["upper"][0, 0])
    True
    """
    c = _check_counts(counts)
    check_open_fraction(level, "level")
    alpha = 1.0 - level
    n_x = c.sum(axis=0).astype(float)[:, None]  # (|X|, 1)
    k = c.T.astype(float)  # (|X|, |S|)
    prior = c.sum(axis=1) / c.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        lo_p = np.where(k > 0, betaincinv(k, n_x - k + 1, alpha / 2), 0.0)
        hi_p = np.where(k < n_x, betaincinv(k + 1, n_x - k, 1 - alpha / 2), 1.0)
        point = np.log(k / n_x) - np.log(prior)[None, :]
        lower = np.log(lo_p) - np.log(prior)[None, :]
        upper = np.log(hi_p) - np.log(prior)[None, :]
    unseen = (n_x == 0).ravel()
    for arr in (point, lower, upper):
        arr[unseen] = np.nan
    return {"log_lift": point, "lower": lower, "upper": upper, "n_x": n_x.ravel()}


def tuple_frame(intervals: dict[str, FloatArray], labels: list[Any]) -> pd.DataFrame:
    """The output of :func:`lift_intervals` as one row per observed tuple."""
    data: dict[str, Any] = {"n_x": intervals["n_x"]}
    for j, lab in enumerate(labels):
        for key in ("log_lift", "lower", "upper"):
            data[f"{key}[{lab}]"] = intervals[key][:, j]
    return pd.DataFrame(data)
