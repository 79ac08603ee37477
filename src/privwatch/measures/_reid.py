r"""Re-identification risk of a sample's records: prosecutor, journalist and marketer risk,
Benedetti-Franconi individual risk with sampling weights, household risk, k-map and
delta-presence.

Every kernel reads counts per equivalence class (records sharing their quasi-identifier
values): the sample class sizes ``f_k``, and where known the population class sizes ``F_k``
(a population table, or the sum of the design weights of the class's records). Per-record
figures are given per class; a record takes its class's value.

Notation (El Emam & Dankar 2008; sdcMicro): ``f_k`` = sample class size, ``F_k`` = population
class size, ``n`` = sample size, :math:`\pi` = sampling fraction.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import ValidationError

__all__ = [
    "DeltaPresence",
    "ReidSummary",
    "delta_presence",
    "global_risk",
    "household_risk",
    "individual_risk",
    "journalist_risk",
    "k_map",
    "marketer_risk",
    "prosecutor_risk_per_class",
]

FloatArray = NDArray[np.float64]
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)


#: The largest count a class may hold (exact in float64).
MAX_COUNT = 2.0**53


def numbers(values: ArrayLike, name: str) -> FloatArray:
    """``values`` as a non-empty 1-dimensional float array of finite real numbers, or a
    ValidationError naming ``name``."""
    raw = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    if raw.dtype == object:
        try:
            raw = np.asarray(raw.tolist())
        except (TypeError, ValueError):
            raise ValidationError(f"`{name}` must be a 1-dimensional array of numbers.") from None
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size == 0:
        raise ValidationError(
            f"`{name}` must be a non-empty 1-dimensional array of real numbers; got dtype "
            f"{raw.dtype} and shape {raw.shape}."
        )
    arr = raw.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValidationError(f"`{name}` must hold finite numbers.")
    return arr


def _sizes(values: ArrayLike, name: str, *, whole: bool = True) -> FloatArray:
    arr = numbers(values, name)
    if (arr <= 0).any() or (arr > MAX_COUNT).any():
        raise ValidationError(f"`{name}` must hold positive numbers of at most 2**53.")
    if whole and (arr != np.round(arr)).any():
        raise ValidationError(f"`{name}` must hold whole numbers of records.")
    with np.errstate(over="ignore"):
        if not np.isfinite(arr.sum()) or arr.sum() > MAX_COUNT:
            raise ValidationError(f"`{name}` must sum to at most 2**53 records.")
    return arr


def _pair(sample: ArrayLike, population: ArrayLike) -> tuple[FloatArray, FloatArray]:
    f = _sizes(sample, "sample_sizes")
    big_f = _sizes(population, "population_sizes", whole=False)
    if big_f.shape != f.shape:
        raise ValidationError(
            f"`population_sizes` must have one entry per class of `sample_sizes` ({f.size}); "
            f"got {big_f.size}."
        )
    if (big_f < f * (1 - 1e-9)).any():
        raise ValidationError("`population_sizes` must be at least `sample_sizes` in every class.")
    return f, np.maximum(big_f, f)


class ReidSummary(NamedTuple):
    """A risk over records: its largest value and its mean over records."""

    max: float
    mean: float


def prosecutor_risk_per_class(sample_sizes: ArrayLike) -> FloatArray:
    r"""Prosecutor risk of each class's records: the attacker knows the target is in the sample.

    .. math:: r_k = 1 / f_k

    El Emam & Dankar, *Protecting privacy using k-anonymity*, JAMIA 15(5), 2008. Its maximum
    is ``1 / k`` and its mean over records ``#classes / n``
    (:func:`privwatch.measures.prosecutor_risk`).

    Examples
    --------
    >>> prosecutor_risk_per_class([1, 2, 4]).tolist()
    [1.0, 0.5, 0.25]
    """
    return 1.0 / _sizes(sample_sizes, "sample_sizes")


def journalist_risk(sample_sizes: ArrayLike, population_sizes: ArrayLike) -> ReidSummary:
    r"""Journalist risk: the attacker matches a known person of the population to the sample.

    .. math:: r_k = 1 / F_k, \qquad R_{\max} = \max_k 1/F_k, \qquad
              R_{\mathrm{mean}} = \frac{1}{n} \sum_k f_k / F_k

    over the classes present in the sample. El Emam & Dankar, JAMIA 15(5), 2008 (the
    journalist scenario; ARX's ``RiskModelSampleSummary``). ``F_k`` comes from a population
    table, or is estimated (sum of design weights). Assumes the attacker's population is the
    one ``F_k`` counts.

    Examples
    --------
    >>> journalist_risk([1, 2], [4, 10])
    ReidSummary(max=0.25, mean=0.15)
    """
    f, big_f = _pair(sample_sizes, population_sizes)
    return ReidSummary(float((1.0 / big_f).max()), float((f / big_f).sum() / f.sum()))


def marketer_risk(sample_sizes: ArrayLike, population_sizes: ArrayLike | None = None) -> float:
    r"""Marketer risk: the expected share of the sample's records re-identified when the
    attacker links every record.

    .. math:: R = \frac{1}{n} \sum_k \frac{f_k}{F_k}
              \quad (\text{the sample is the population: } F_k = f_k,\ R = \#\text{classes}/n)

    El Emam, *Guide to the De-Identification of Personal Health Information*, CRC 2013, §5;
    ARX's ``RiskModelSampleSummary`` (marketer risk). With estimated ``F_k`` use
    :func:`global_risk` / ``n``, the expected 1/F_k given the sample (sdcMicro's reading).

    Examples
    --------
    >>> marketer_risk([1, 1, 2])
    0.75
    >>> marketer_risk([1, 2], [2, 4])  # (1/2 + 2/4) / 3
    0.3333333333333333
    """
    if population_sizes is None:
        f = _sizes(sample_sizes, "sample_sizes")
        return float(f.size / f.sum())
    f, big_f = _pair(sample_sizes, population_sizes)
    return float((f / big_f).sum() / f.sum())


def _expected_inverse(f: FloatArray, p: FloatArray) -> FloatArray:
    """``E[1/F | f]`` with ``F - f ~ NegBin(f, p)``: ``int_0^1 p u^(f-1) / (p + (1-p) u) du``."""
    u = (_NODES + 1.0) / 2.0
    w = _WEIGHTS / 2.0
    q = 1.0 - p
    integrand = p[:, None] * u[None, :] ** (f[:, None] - 1.0) / (p[:, None] + q[:, None] * u)
    return np.asarray(integrand @ w, dtype=np.float64)


def individual_risk(
    sample_sizes: ArrayLike, population_sizes: ArrayLike, *, method: str = "approx"
) -> FloatArray:
    r"""Benedetti-Franconi individual risk of each class's records: :math:`E[1/F_k \mid f_k]`.

    With :math:`\hat F_k` the sum of the class's design weights and
    :math:`p_k = f_k / \hat F_k`, the population count given the sample is modelled as
    :math:`F_k - f_k \sim \mathrm{NegBin}(f_k, p_k)`, so that

    .. math:: r_k = E\Bigl[\frac{1}{F_k}\Bigr] = \int_0^1 \frac{p_k\, u^{f_k - 1}}
              {p_k + (1 - p_k) u}\, du \qquad (\texttt{method="exact"}),

    in closed form :math:`\frac{p}{1-p}\ln\frac1p` for ``f = 1`` and
    :math:`\frac{p}{1-p} - \bigl(\frac{p}{1-p}\bigr)^2 \ln\frac1p` for ``f = 2``; for ``f > 2``
    ``method="approx"`` takes :math:`p / (f - (1 - p))`. A class with :math:`\hat F_k = f_k`
    (the whole population sampled) has :math:`r_k = 1 / f_k`. Benedetti & Franconi,
    *Statistical and technological solutions for controlled data dissemination*, NTTS 1998;
    Franconi & Polettini, *Individual risk estimation in mu-Argus: a review*, PSD 2004
    (sdcMicro's ``indivRisk``). Assumes weights that gross up to the population and
    independence between classes.

    Examples
    --------
    >>> round(float(individual_risk([1], [10])[0]), 6)  # (0.1 / 0.9) ln 10
    0.255843
    """
    if method not in ("approx", "exact"):
        raise ValidationError(f"`method` must be 'approx' or 'exact'; got {method!r}.")
    f, big_f = _pair(sample_sizes, population_sizes)
    p = f / big_f
    out = np.empty_like(f)
    full = p >= 1.0 - 1e-12
    one = (f == 1) & ~full
    two = (f == 2) & ~full
    more = (f > 2) & ~full
    ratio = p / np.where(full, 0.5, 1.0 - p)
    log_inv = -np.log(p)
    out[one] = ratio[one] * log_inv[one]
    out[two] = ratio[two] - ratio[two] ** 2 * log_inv[two]
    if method == "approx":
        out[more] = p[more] / (f[more] - (1.0 - p[more]))
    elif more.any():
        out[more] = _expected_inverse(f[more], p[more])
    out[full] = 1.0 / f[full]
    return out


def global_risk(sample_sizes: ArrayLike, class_risk: ArrayLike) -> float:
    r"""Global risk: the expected number of re-identifications, :math:`\sum_k f_k r_k`.

    The sum over records of their individual risk (sdcMicro's ``global_risk_ER``; divided by
    ``n`` it is the marketer risk under the same model). Franconi & Polettini, PSD 2004.

    Examples
    --------
    >>> global_risk([1, 2], [0.5, 0.25])
    1.0
    """
    f = _sizes(sample_sizes, "sample_sizes")
    r = numbers(class_risk, "class_risk")
    if r.shape != f.shape:
        raise ValidationError("`class_risk` must have one entry per class of `sample_sizes`.")
    return float((f * r).sum())


def household_risk(record_risk: ArrayLike, cluster: ArrayLike) -> FloatArray:
    r"""Household (cluster) risk of each record: the chance at least one member of its
    household is re-identified.

    .. math:: r^{h}_i = 1 - \prod_{j \in h(i)} (1 - r_j)

    sdcMicro's ``measure_risk(hid=...)`` (Franconi & Polettini, PSD 2004; Hundepool et al.,
    *Statistical Disclosure Control*, Wiley 2012, §3.3.6). Assumes the members' risks are
    independent.

    Examples
    --------
    >>> household_risk([0.5, 0.5, 0.1], [7, 7, 8]).tolist()
    [0.75, 0.75, 0.1]
    """
    r = numbers(record_risk, "record_risk")
    ids = np.asarray(cluster)
    if ids.shape != r.shape:
        raise ValidationError("`cluster` must have one entry per record of `record_risk`.")
    if ((r < 0) | (r > 1)).any():
        raise ValidationError("`record_risk` must hold probabilities in [0, 1].")
    _, inv = np.unique(ids, return_inverse=True)
    with np.errstate(divide="ignore"):
        log_safe = np.log1p(-r)
    sums = np.bincount(inv, weights=log_safe)
    return np.asarray(-np.expm1(sums[inv]), dtype=np.float64)


def k_map(sample_sizes: ArrayLike, population_sizes: ArrayLike) -> int:
    r"""The ``k`` of k-map: the smallest population class among the sample's classes.

    .. math:: k = \min_{k : f_k > 0} F_k

    Sweeney, *Computational disclosure control*, PhD thesis MIT 2001; El Emam & Dankar 2008
    (Google DLP's k-map). Every released record matches at least ``k`` people of the
    population table.

    Examples
    --------
    >>> k_map([1, 3], [4, 10])
    4
    """
    _, big_f = _pair(sample_sizes, population_sizes)
    return math.floor(float(big_f.min()) + 1e-9)


class DeltaPresence(NamedTuple):
    """The ``(delta_min, delta_max)`` of delta-presence over the population's classes."""

    delta_min: float
    delta_max: float


def delta_presence(sample_sizes: ArrayLike, population_sizes: ArrayLike) -> DeltaPresence:
    r"""Delta-presence: how far the release reveals that a person of the population is in it.

    .. math:: \delta_k = f_k / F_k, \qquad (\delta_{\min}, \delta_{\max})
              = (\min_k \delta_k, \max_k \delta_k)

    over every class of the population table (``f_k = 0`` for classes the sample lacks).
    Nergiz, Atzori & Clifton, *Hiding the presence of individuals from shared databases*,
    SIGMOD 2007 (Google DLP's delta-presence). ``delta_max = 1`` means someone's presence is
    certain.

    Examples
    --------
    >>> delta_presence([0, 1, 3], [2, 4, 3])
    DeltaPresence(delta_min=0.0, delta_max=1.0)
    """
    f = numbers(sample_sizes, "sample_sizes")
    big_f = _sizes(population_sizes, "population_sizes", whole=False)
    if f.shape != big_f.shape or (f < 0).any() or (f > big_f * (1 + 1e-9)).any():
        raise ValidationError(
            "`sample_sizes` must have one entry per population class, between 0 and its size."
        )
    share = f / big_f
    return DeltaPresence(float(share.min()), float(share.max()))
