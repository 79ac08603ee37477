r"""Classic disclosure measures of a table's equivalence classes.

Every kernel reads the equivalence-class contingency table ``counts[c, s]``: one row per
equivalence class (records sharing the released quasi-identifier values), one column per value
of the sensitive attribute, entries = numbers of records. Rows must be non-empty classes; columns
whose total is zero (a sensitive value no record holds) are dropped, since they are not part of
the table's distribution. Each function returns the *level* the table reaches (the smallest
``t``, ``beta``, ``delta``, ``c`` or the largest ``k``, ``l`` it satisfies), so a custodian
compares it with a threshold of their choice.

Notation (per class ``c``): :math:`n_c = \sum_s \mathrm{counts}[c, s]`, the class distribution
:math:`q_c(s) = \mathrm{counts}[c, s] / n_c`, the table distribution
:math:`p(s) = \sum_c \mathrm{counts}[c, s] / N`, with :math:`N` records in all.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import ValidationError

__all__ = [
    "ProsecutorRisk",
    "basic_beta_likeness",
    "delta_disclosure",
    "distinct_l_diversity",
    "enhanced_beta_likeness",
    "entropy_l_diversity",
    "k_anonymity",
    "prosecutor_risk",
    "recursive_cl_diversity",
    "sample_uniques",
    "t_closeness",
]

FloatArray = NDArray[np.float64]


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _counts(counts: ArrayLike, name: str = "counts") -> FloatArray:
    """``counts`` as a float array after the checks of the module docstring (zero columns
    removed)."""
    raw = np.asarray(counts) if not isinstance(counts, np.ndarray) else counts
    if raw.dtype.kind not in "biufO":
        raise ValidationError(f"`{name}` must be an array of counts; got dtype {raw.dtype}.")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError(
            f"`{name}` must be an array of counts; got {_shown(counts)}."
        ) from None
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValidationError(
            f"`{name}` must be a non-empty 2-dimensional array (classes x sensitive values); "
            f"got shape {arr.shape}."
        )
    bad = arr[~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))]
    if bad.size:
        raise ValidationError(
            f"`{name}` must hold non-negative whole numbers of records; got {float(bad.flat[0])!r}."
        )
    with np.errstate(over="ignore"):
        total = float(arr.sum())
    if not np.isfinite(total):
        raise ValidationError(
            f"`{name}` must have a finite total number of records; got a sum that overflows."
        )
    empty = np.flatnonzero(arr.sum(axis=1) == 0)
    if empty.size:
        raise ValidationError(
            f"`{name}` must have at least one record in every class (row); got an empty row "
            f"{int(empty[0])}."
        )
    return arr[:, arr.sum(axis=0) > 0]


def _dists(counts: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``(q, p)``: class distributions ``q[c, s]`` and the table distribution ``p[s]``."""
    arr = _counts(counts)
    return arr / arr.sum(axis=1, keepdims=True), arr.sum(axis=0) / arr.sum()


def k_anonymity(counts: ArrayLike) -> int:
    r"""The ``k`` of k-anonymity: the size of the smallest equivalence class.

    .. math:: k = \min_c n_c

    Samarati & Sweeney (1998); Sweeney, IJUFKS 10(5), 2002. Every record is indistinguishable
    from at least ``k - 1`` others on the quasi-identifiers. Common thresholds: ``k >= 5``
    (statistical agencies, ARX examples), ``k >= 11`` for health data (CMS cell-size rule).

    Examples
    --------
    >>> k_anonymity([[3, 1], [1, 1]])
    2
    """
    return int(_counts(counts).sum(axis=1).min())


def sample_uniques(counts: ArrayLike) -> int:
    r"""Number of sample-unique records: records alone in their equivalence class.

    .. math:: \#\{c : n_c = 1\}

    The basic re-identification count of statistical disclosure control (sdcMicro's
    ``fk = 1``; Hundepool et al., *Statistical Disclosure Control*, Wiley 2012). A release
    is usually expected to have none.

    Examples
    --------
    >>> sample_uniques([[1, 0], [2, 1], [0, 1]])
    2
    """
    return int((_counts(counts).sum(axis=1) == 1).sum())


class ProsecutorRisk(NamedTuple):
    """Prosecutor re-identification risk: ``max`` and ``mean`` over records of ``1 / n_c``."""

    max: float
    mean: float


def prosecutor_risk(counts: ArrayLike) -> ProsecutorRisk:
    r"""Prosecutor re-identification risk (the attacker knows the person is in the data).

    .. math:: R_{\max} = \max_c \frac{1}{n_c} = \frac{1}{k}, \qquad
              R_{\mathrm{mean}} = \frac{1}{N} \sum_c n_c \cdot \frac{1}{n_c}
              = \frac{\#\text{classes}}{N}

    El Emam & Dankar, JAMIA 15(5), 2008. Common thresholds: maximum ``<= 0.2`` (``k = 5``) or
    ``<= 0.09`` (``k = 11``, EMA policy 0070 / Health Canada for public releases); mean
    ``<= 0.05``.

    Examples
    --------
    >>> prosecutor_risk([[3, 1], [1, 1]])
    ProsecutorRisk(max=0.5, mean=0.3333333333333333)
    """
    sizes = _counts(counts).sum(axis=1)
    return ProsecutorRisk(float(1.0 / sizes.min()), float(sizes.size / sizes.sum()))


def distinct_l_diversity(counts: ArrayLike) -> int:
    r"""The ``l`` of distinct l-diversity: the fewest distinct sensitive values in a class.

    .. math:: l = \min_c \#\{s : \mathrm{counts}[c, s] > 0\}

    Machanavajjhala et al., ACM TKDD 1(1), 2007 (the "distinct" reading of l-diversity). Common
    threshold: ``l >= 2`` (ARX's default), ``l >= 3`` in the paper's experiments.

    Examples
    --------
    >>> distinct_l_diversity([[3, 1, 0], [1, 1, 1]])
    2
    """
    return int((_counts(counts) > 0).sum(axis=1).min())


def entropy_l_diversity(counts: ArrayLike) -> float:
    r"""The ``l`` of entropy l-diversity: ``exp`` of the smallest class entropy (not rounded).

    .. math:: l = \exp \min_c H(q_c), \qquad H(q_c) = -\sum_s q_c(s) \ln q_c(s)

    Machanavajjhala et al., ACM TKDD 1(1), 2007 (entropy l-diversity): a table is entropy
    l-diverse when every class has :math:`H(q_c) \ge \ln l`. Common threshold: ``l >= 2``.

    Examples
    --------
    >>> round(entropy_l_diversity([[2, 2], [1, 1]]), 12)
    2.0
    """
    q, _ = _dists(counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(q > 0, q * np.log(q), 0.0)
    return float(np.exp((-terms.sum(axis=1)).min()))


def recursive_cl_diversity(counts: ArrayLike, l: int = 2) -> float:  # noqa: E741
    r"""The smallest ``c`` of recursive (c, l)-diversity for a given ``l``.

    With a class's counts sorted in *descending* order :math:`r_1 \ge r_2 \ge \dots \ge r_m`, the
    class is recursive (c, l)-diverse when :math:`r_1 < c\,(r_l + r_{l+1} + \dots + r_m)`. The
    table meets it for every ``c`` strictly above

    .. math:: c^* = \max_c \frac{r_1}{\sum_{i \ge l} r_i}

    (``inf`` when a class has fewer than ``l`` distinct values). Machanavajjhala et al., ACM
    TKDD 1(1), 2007 (recursive (c, l)-diversity). Common setting: ``l = 2`` with ``c = 3``.

    Examples
    --------
    >>> recursive_cl_diversity([[3, 1, 1], [2, 2, 1]], l=2)  # max(3 / 2, 2 / 3)
    1.5
    """
    if isinstance(l, bool) or not isinstance(l, int | np.integer) or l < 2:
        raise ValidationError(f"`l` must be an int of at least 2; got {_shown(l)}.")
    arr = -np.sort(-_counts(counts), axis=1)
    tail = arr[:, int(l) - 1 :].sum(axis=1)
    with np.errstate(divide="ignore"):
        ratio = np.where(tail > 0, arr[:, 0] / np.where(tail > 0, tail, 1.0), np.inf)
    return float(ratio.max())


def t_closeness(counts: ArrayLike, *, values: ArrayLike | None = None) -> float:
    r"""The ``t`` of t-closeness: the largest Earth Mover's Distance between a class
    distribution and the table distribution.

    Categorical sensitive attribute (``values=None``), equal ground distance (all values 1
    apart): the EMD is the total variation distance

    .. math:: t = \max_c \tfrac12 \sum_s |q_c(s) - p(s)|.

    Numeric or ordinal sensitive attribute (``values`` = one sort key per column, e.g. the
    numeric values), ordered distance :math:`|i - j| / (m - 1)` between the ranks of the ``m``
    values: with :math:`r_i = q_c(s_i) - p(s_i)` in increasing order of ``values``,

    .. math:: t = \max_c \frac{1}{m - 1} \sum_{i=1}^{m} \Bigl|\sum_{j \le i} r_j\Bigr|.

    Li, Li & Venkatasubramanian, ICDE 2007 (EMD with equal and ordered distance). Common
    threshold: ``t <= 0.2`` (the paper's experiments use 0.15 and 0.2).

    Examples
    --------
    >>> t_closeness([[2, 0], [0, 2]])
    0.5
    >>> round(t_closeness([[2, 0, 0], [0, 0, 2]], values=[10, 20, 30]), 12)  # (1/2)(1/2 + 1/2)
    0.5
    """
    q, p = _dists(counts)
    if values is None:
        return float((0.5 * np.abs(q - p).sum(axis=1)).max())
    raw = _counts(counts)
    keys = np.asarray(values)
    full = np.asarray(counts, dtype=np.float64).sum(axis=0) > 0
    if keys.ndim != 1 or keys.shape[0] != full.shape[0]:
        raise ValidationError(
            f"`values` must be a 1-dimensional array with one entry per column of `counts` "
            f"({full.shape[0]}); got shape {keys.shape}."
        )
    keys = keys[full]
    if np.unique(keys).size != keys.size:
        raise ValidationError(f"`values` must be distinct; got {_shown(values)}.")
    m = raw.shape[1]
    if m == 1:
        return 0.0
    order = np.argsort(keys, kind="stable")
    r = (q - p)[:, order]
    return float((np.abs(np.cumsum(r, axis=1)).sum(axis=1) / (m - 1)).max())


def _gain(counts: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Relative confidence gain ``D = (q - p) / p`` where ``q > p`` (0 elsewhere), and ``p``."""
    q, p = _dists(counts)
    return np.where(q > p, (q - p) / p, 0.0), p


def basic_beta_likeness(counts: ArrayLike) -> float:
    r"""The ``beta`` of basic beta-likeness: the largest relative gain in confidence.

    .. math:: \beta = \max_{c,\, s\,:\, q_c(s) > p(s)} \frac{q_c(s) - p(s)}{p(s)}

    Cao & Karras, VLDB 2012, basic beta-likeness (only gains count: a class may lower the confidence
    in a value freely). Common threshold: ``beta <= 1`` (confidence at most doubled); the
    paper's experiments range over small ``beta`` from 1 to 5.

    Examples
    --------
    >>> basic_beta_likeness([[1, 1], [1, 3]])  # p = (1/3, 2/3); q = 1/2 in class 0: gain 1/2
    0.5
    """
    gain, _ = _gain(counts)
    return float(gain.max())


def enhanced_beta_likeness(counts: ArrayLike) -> float:
    r"""The smallest ``beta`` of enhanced beta-likeness; ``inf`` when no ``beta`` is met.

    Enhanced beta-likeness caps the gain of frequent values by :math:`-\ln p(s)`, so that no
    class can make any value certain:

    .. math:: \frac{q_c(s) - p(s)}{p(s)} \le \min\{\beta, -\ln p(s)\}
              \quad \text{for every } c, s \text{ with } q_c(s) > p(s).

    The table therefore meets it for every :math:`\beta \ge` :func:`basic_beta_likeness` when
    every gain is within its cap :math:`-\ln p(s)`, and for no ``beta`` otherwise (returned as
    ``inf``). Cao & Karras, VLDB 2012, enhanced beta-likeness. (pycanon 1.3.6 returns
    ``min(basic beta, -ln min_s p(s))`` instead, which is not this definition.)

    Examples
    --------
    >>> enhanced_beta_likeness([[1, 1], [1, 3]])  # gains 1/2 <= ln 3 and 1/8 <= ln 1.5
    0.5
    >>> enhanced_beta_likeness([[2, 0], [0, 2]])  # q = 1 against p = 1/2: gain 1 > ln 2
    inf
    """
    gain, p = _gain(counts)
    with np.errstate(divide="ignore"):
        cap = -np.log(p)
    if (gain > cap[None, :] * (1.0 + 1e-12)).any():
        return float("inf")
    return float(gain.max())


def delta_disclosure(counts: ArrayLike) -> float:
    r"""The ``delta`` of delta-disclosure privacy: the largest absolute log-ratio of a class
    distribution to the table distribution.

    .. math:: \delta = \max_{c, s} \left| \ln \frac{q_c(s)}{p(s)} \right|

    Brickell & Shmatikov, KDD 2008, delta-disclosure privacy (the table is delta-disclosure
    private for every delta strictly above this value). A sensitive value absent from a class has
    :math:`\ln 0 = -\infty`: the class rules it out, which no finite delta allows, so the result
    is ``inf`` (pycanon 1.3.6 skips such cells). It equals the two-sided lift-privacy epsilon of
    the joint pmf ``counts.T / N`` (Hsu et al., Definition 1). No threshold is standard; the
    report uses ``delta <= 1`` nat (a belief changes by at most a factor e), the lift epsilon's
    scale.

    Examples
    --------
    >>> round(delta_disclosure([[1, 1], [1, 3]]), 6)  # |ln((1/2)/(1/3))| = ln 1.5
    0.405465
    >>> delta_disclosure([[2, 0], [1, 1]])
    inf
    """
    q, p = _dists(counts)
    with np.errstate(divide="ignore"):
        return float(np.abs(np.log(q / p[None, :])).max())
