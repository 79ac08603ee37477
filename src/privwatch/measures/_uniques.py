r"""Population uniques estimated from a sample's frequencies of frequencies.

A sample of ``n`` records drawn from a population of ``N`` (sampling fraction
:math:`\pi = n / N`) falls into equivalence classes on its quasi-identifiers; ``c_j`` is the
number of sample classes of size ``j`` (the *frequencies of frequencies*) and
:math:`u = \sum_j c_j` the number of classes. Each estimator below turns ``(c_j, n, N)`` into
an estimate of the number of population uniques (classes of size one in the population), the
quantity journalist and marketer risk rest on. The estimators, and the rule that chooses among
them, are those of ARX (``ModelPitman``, ``ModelZayatz``, ``ModelSNB``,
``RiskModelPopulationUniqueness``); the code is written from the papers.

Notation: ``c_j`` = :math:`c_j` (ARX: the class-size histogram), :math:`\pi` = sampling fraction
(Chen & Keller-McNulty: ``f``), ``N`` = population size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import digamma, gammaln, polygamma

from ..exceptions import ValidationError
from ._reid import MAX_COUNT, numbers

__all__ = [
    "PopulationUniques",
    "frequencies_of_frequencies",
    "pitman_uniques",
    "population_uniques",
    "snb_uniques",
    "zayatz_uniques",
]

FloatArray = NDArray[np.float64]
#: Dankar et al.'s (2012) switch: at or below this sampling fraction the rule takes Pitman.
DANKAR_FRACTION = 0.1


def frequencies_of_frequencies(class_sizes: ArrayLike) -> tuple[NDArray[np.int64], FloatArray]:
    """``(j, c_j)``: the distinct class sizes ``j`` (increasing) and how many classes have each.

    Examples
    --------
    >>> j, c = frequencies_of_frequencies([1, 1, 2, 5, 1])
    >>> j.tolist(), c.tolist()
    ([1, 2, 5], [3.0, 1.0, 1.0])
    """
    sizes = numbers(class_sizes, "class_sizes")
    bad = (sizes < 1).any() or (sizes > MAX_COUNT).any() or (sizes != np.round(sizes)).any()
    if bad or sizes.sum() > MAX_COUNT:
        raise ValidationError(
            "`class_sizes` must hold whole numbers of at least 1, summing to at most 2**53."
        )
    j, c = np.unique(sizes.astype(np.int64), return_counts=True)
    return j, c.astype(np.float64)


def _prepare(
    class_sizes: ArrayLike, population_size: float
) -> tuple[NDArray[np.int64], FloatArray, float, float]:
    j, c = frequencies_of_frequencies(class_sizes)
    n = float((j * c).sum())
    ok = isinstance(population_size, int | float | np.integer | np.floating) and not isinstance(
        population_size, bool
    )
    if not ok or not n <= float(population_size) <= MAX_COUNT:
        raise ValidationError(
            f"`population_size` must be a number from the sample size {n:.0f} to 2**53; got "
            f"{population_size!r}."
        )
    return j, c, n, float(population_size)


def _log_hypergeom_one(population: float, successes: NDArray[np.int64], draws: float) -> FloatArray:
    """``log P(X = 1)`` for ``X ~ Hypergeometric(population, successes, draws)`` up to the
    constant ``-log C(population, draws)``: ``log(j) + log C(population - j, draws - 1)``."""
    out = np.full(successes.shape, -np.inf)
    for i, k in enumerate(successes.tolist()):
        rest = population - k
        if k >= 1 and rest >= draws - 1:
            out[i] = (
                math.log(k)
                + math.lgamma(rest + 1)
                - math.lgamma(draws)
                - math.lgamma(rest - draws + 2)
            )
    return out


def zayatz_uniques(class_sizes: ArrayLike, population_size: float) -> float:
    r"""Zayatz's (1991) estimate of the number of population uniques.

    The sample's class-size distribution :math:`c_j / u` stands in for the population's; the
    chance that a sample unique is a population unique is then, by Bayes' rule with a
    hypergeometric draw of ``n`` records from ``N``,

    .. math:: P(F = 1 \mid f = 1) = \frac{(c_1/u)\, h(1; N, 1, n)}
              {\sum_j (c_j/u)\, h(1; N, j, n)}, \qquad
              \hat U = \frac{c_1\, P(F = 1 \mid f = 1)}{\pi},

    with :math:`h(1; N, j, n) = j \binom{N-j}{n-1} / \binom{N}{n}`. Zayatz, *Estimation of the
    number of unique population elements using a sample*, Proc. Survey Research Methods, ASA
    1991 (as implemented by ARX's ``ModelZayatz``). Assumes simple random sampling without
    replacement; tends to overestimate at small sampling fractions.

    Examples
    --------
    >>> zayatz_uniques([1, 1, 2], 4)  # the sample is the population: 2 uniques
    2.0
    """
    j, c, n, big_n = _prepare(class_sizes, population_size)
    if j[0] != 1:
        return 0.0
    log_h = _log_hypergeom_one(big_n, j, n)
    weights = c * np.exp(log_h - log_h[0])
    share = float(weights[0] / weights.sum())
    return float(c[0] * share * big_n / n)


def _pitman_sums(
    theta: float, alpha: float, u: float, n: float, j: NDArray[np.int64], c: FloatArray
) -> tuple[float, FloatArray, FloatArray]:
    """Log-likelihood, gradient and Hessian of Pitman's sampling formula in (theta, alpha)."""
    i = np.arange(1.0, u)
    t_ia = theta + i * alpha
    # the sums over m = 1..n-1 of log, 1/ and 1/^2 of (theta + m), in closed form (log-gamma,
    # digamma, trigamma): O(1) instead of O(n) records
    log_tm = float(gammaln(theta + n) - gammaln(theta + 1.0))
    inv_tm = float(digamma(theta + n) - digamma(theta + 1.0))
    inv2_tm = float(polygamma(1, theta + 1.0) - polygamma(1, theta + n))
    ell = np.arange(1.0, float(j.max()))
    lm = ell - alpha
    # per class size j: sums over l = 1..j-1 (cumulative sums indexed by j - 1)
    cum_log = np.concatenate(([0.0], np.cumsum(np.log(lm))))
    cum_inv = np.concatenate(([0.0], np.cumsum(1.0 / lm)))
    cum_inv2 = np.concatenate(([0.0], np.cumsum(1.0 / lm**2)))
    idx = j - 1
    loglik = float(np.log(t_ia).sum() - log_tm + (c * cum_log[idx]).sum())
    g_t = float((1.0 / t_ia).sum() - inv_tm)
    g_a = float((i / t_ia).sum() - (c * cum_inv[idx]).sum())
    h_tt = float(-(1.0 / t_ia**2).sum() + inv2_tm)
    h_ta = float(-(i / t_ia**2).sum())
    h_aa = float(-(i**2 / t_ia**2).sum() - (c * cum_inv2[idx]).sum())
    return loglik, np.array([g_t, g_a]), np.array([[h_tt, h_ta], [h_ta, h_aa]])


def _ascend(
    theta: float,
    alpha: float,
    loglik: float,
    grad: FloatArray,
    steps: tuple[FloatArray, FloatArray],
    data: tuple[float, float, NDArray[np.int64], FloatArray],
) -> tuple[float, float, float] | None:
    """The first of ``steps`` (Newton, then scaled gradient) that, halved until it stays in
    the parameter space and does not lower the likelihood, moves: ``(theta, alpha, gain)``."""
    for step in steps:
        if not np.all(np.isfinite(step)) or grad @ step <= 0:  # not an ascent direction
            continue
        scale = 1.0
        while scale > 1e-10:
            t_new, a_new = theta + scale * step[0], alpha + scale * step[1]
            if 0 < a_new < 1 and t_new > -a_new:
                gain = _pitman_sums(t_new, a_new, *data)[0] - loglik
                if gain >= 0:
                    return t_new, a_new, gain
            scale /= 2.0
    return None


def _pitman_fit(
    j: NDArray[np.int64], c: FloatArray, n: float, iterations: int = 200
) -> tuple[float, float] | None:
    """Maximum-likelihood ``(theta, alpha)`` of the Pitman sampling formula, or None."""
    u = float(c.sum())
    c1 = float(c[0]) if j[0] == 1 else 0.0
    c2 = float(c[j == 2][0]) if (j == 2).any() else 1.0
    # Hoshino's moment-type starting point (also ARX's)
    cc = c1 * (c1 - 1.0) / c2
    den = 2.0 * c1 * u + c1 * cc - n * cc
    theta = (n * u * cc - c1 * (n - 1.0) * (2.0 * u + cc)) / den if den != 0 else 1.0
    alpha = (theta * (c1 - n) + (n - 1.0) * c1) / (n * u) if theta > 0 else 0.5
    if not (np.isfinite(theta) and theta > 0 and 0 < alpha < 1):
        theta, alpha = max(u / 2.0, 1.0), 0.5
    stalls = 0
    for _ in range(iterations):
        loglik, grad, hess = _pitman_sums(theta, alpha, u, n, j, c)
        try:
            newton = -np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            newton = np.zeros(2)
        gradient = grad / (np.abs(np.diag(hess)) + 1e-12)
        steps = (np.asarray(newton, dtype=np.float64), np.asarray(gradient, dtype=np.float64))
        gain = _ascend(theta, alpha, loglik, grad, steps, (u, n, j, c))
        if gain is None:
            break
        theta, alpha, improvement = gain
        stalls = stalls + 1 if improvement <= 1e-12 * (1.0 + abs(loglik)) else 0
        if stalls >= 5 or np.abs(grad).max() < 1e-9:
            break
    if not (np.isfinite(theta) and 0 < alpha < 1):
        return None
    return float(theta), float(alpha)


def pitman_uniques(class_sizes: ArrayLike, population_size: float) -> float | None:
    r"""Hoshino's (2001) Pitman-model estimate of the number of population uniques.

    The classes are modelled by the Pitman sampling formula (a two-parameter Poisson-Dirichlet
    partition) with parameters :math:`\theta > -\alpha`, :math:`0 < \alpha < 1`, fitted to the
    sample by maximum likelihood,

    .. math:: \ell(\theta, \alpha) = \sum_{i=1}^{u-1} \ln(\theta + i\alpha)
              - \sum_{i=1}^{n-1} \ln(\theta + i) + \sum_j c_j \sum_{l=1}^{j-1} \ln(l - \alpha),

    and the expected number of population uniques is

    .. math:: \hat U = \frac{\Gamma(\theta + 1)}{\Gamma(\theta + \alpha)}\, N^{\alpha}.

    Hoshino, *Applying Pitman's sampling formula to microdata disclosure risk assessment*,
    J. Official Statistics 17(4), 2001. The likelihood is maximised by damped Newton steps from
    Hoshino's starting point (ARX's ``ModelPitman`` solves the same score equations). Returns
    ``None`` when the fit fails or the estimate falls outside ``[0, N]``; ``0`` without sample
    uniques. Suited to small sampling fractions (Dankar et al. 2012).

    Examples
    --------
    >>> pitman_uniques([2, 3, 4], 1000)  # no sample uniques
    0.0
    """
    j, c, n, big_n = _prepare(class_sizes, population_size)
    if j[0] != 1:
        return 0.0
    if c.sum() < 2 or n < 3:
        return None
    fit = _pitman_fit(j, c, n)
    if fit is None:
        return None
    theta, alpha = fit
    try:
        value = math.exp(
            math.lgamma(theta + 1.0) - math.lgamma(theta + alpha) + alpha * math.log(big_n)
        )
    except (OverflowError, ValueError):
        return None
    return value if 0.0 <= value <= big_n else None


def _shlosser_classes(j: NDArray[np.int64], c: FloatArray, pi: float) -> float:
    r"""Haas et al.'s (1995) Shlosser-type estimate of the number of non-empty population
    classes ``K`` (the estimate ARX's ``ModelSNB`` starts from)."""
    jf = j.astype(np.float64)
    q = 1.0 - pi
    var1 = (jf * pi**2 * (1.0 - pi**2) ** (jf - 1.0) * c).sum()
    var2 = (((1.0 - pi**2) ** jf - q**jf) * c).sum()  # (1-pi)^j ((1+pi)^j - 1)
    var3 = (q**jf * c).sum()
    var4 = (jf * pi * q ** (jf - 1.0) * c).sum()
    c1 = float(c[0]) if j[0] == 1 else 0.0
    if var2 <= 0 or var4 <= 0:
        return float(c.sum())
    return float(c.sum() + c1 * (var1 / var2) * (var3 / var4) ** 2)


def snb_expected(k: float, pi: float, alpha: float, beta: float) -> tuple[float, float]:
    r"""Expected numbers of sample classes of size 1 and 2 under the SNB model.

    Population class sizes are :math:`F = 1 + Y` with :math:`Y \sim \mathrm{NegBin}(\alpha,
    \beta)` (:math:`P(Y = y) = \frac{\Gamma(\alpha + y)}{\Gamma(\alpha)\, y!} \beta^\alpha
    (1 - \beta)^y`), and a Bernoulli(:math:`\pi`) sample of each; with
    :math:`d = (1 - \pi)(1 - \beta)`,

    .. math:: E[c_1] = K \pi \Bigl(\frac{\beta}{1 - d}\Bigr)^{\alpha}
              \Bigl(1 + \frac{\alpha d}{1 - d}\Bigr), \qquad
              E[c_2] = K \frac{\pi^2}{2}\, \alpha (1 - \beta) \beta^\alpha
              \frac{2 - (1 - \alpha) d}{(1 - d)^{\alpha + 2}}.
    """
    d = (1.0 - pi) * (1.0 - beta)
    e1 = k * pi * (beta / (1.0 - d)) ** alpha * (1.0 + alpha * d / (1.0 - d))
    e2 = (
        k
        * pi**2
        / 2.0
        * alpha
        * (1.0 - beta)
        * beta**alpha
        * (2.0 - (1.0 - alpha) * d)
        / (1.0 - d) ** (alpha + 2.0)
    )
    return float(e1), float(e2)


def snb_uniques(class_sizes: ArrayLike, population_size: float) -> float | None:
    r"""Chen & Keller-McNulty's (1998) shifted-negative-binomial estimate of population uniques.

    ``K``, the number of non-empty population classes, is estimated first (Haas et al.'s
    Shlosser-type estimator); the SNB parameters :math:`(\alpha, \beta)` then solve
    :math:`E[c_1] = c_1` and :math:`E[c_2] = c_2` (see :func:`snb_expected`), and

    .. math:: \hat U = K\, P(F = 1) = K \beta^{\alpha}.

    Chen & Keller-McNulty, *Estimation of identification disclosure risk in microdata*,
    J. Official Statistics 14(1), 1998. Assumes Bernoulli sampling at fraction
    :math:`\pi = n / N`. Returns ``None`` when the equations have no solution. ARX's
    ``ModelSNB`` multiplies :math:`E[c_2]` by :math:`(1 - d)^{\alpha + 2}` where the model
    divides (and subtracts 1 once per class size in ``K``'s denominator); privwatch follows
    the model (docs/reidentification.md).
    """
    j, c, n, big_n = _prepare(class_sizes, population_size)
    if j[0] != 1:
        return 0.0
    c1 = float(c[0])
    c2 = float(c[j == 2][0]) if (j == 2).any() else 0.0
    if c2 <= 0:
        return None
    pi = n / big_n
    if pi >= 1.0:
        return c1
    k = _shlosser_classes(j, c, pi)

    def resid(z: FloatArray) -> FloatArray:
        alpha, beta = math.exp(z[0]), 1.0 / (1.0 + math.exp(-z[1]))
        e1, e2 = snb_expected(k, pi, alpha, beta)
        return np.array([math.log(e1) - math.log(c1), math.log(e2) - math.log(c2)])

    best: FloatArray | None = None
    for start in ((0.0, 0.0), (-2.0, -2.0), (1.0, -4.0), (-1.0, 2.0), (2.0, -6.0)):
        z = np.array(start, dtype=np.float64)
        try:
            for _ in range(100):
                r = resid(z)
                if np.abs(r).max() < 1e-10:
                    break
                jac = np.empty((2, 2))
                for col in range(2):
                    dz = np.zeros(2)
                    dz[col] = 1e-6
                    jac[:, col] = (resid(z + dz) - r) / 1e-6
                step = -np.linalg.solve(jac, r)
                step *= min(1.0, 2.0 / max(np.abs(step).max(), 1e-300))
                z = z + step
            if np.abs(resid(z)).max() < 1e-6:
                best = z
                break
        except (np.linalg.LinAlgError, OverflowError, ValueError, ZeroDivisionError):
            continue
    if best is None:
        return None
    alpha, beta = math.exp(best[0]), 1.0 / (1.0 + math.exp(-best[1]))
    value = k * beta**alpha
    return float(value) if 0.0 <= value <= big_n else None


@dataclass(frozen=True)
class PopulationUniques:
    """Population uniques: the rule's ``estimate`` (count), the ``estimator`` it chose and
    ``why``, and each estimator's value (``None`` where its model could not be fitted)."""

    estimate: float
    estimator: str
    why: str
    pitman: float | None
    zayatz: float
    snb: float | None
    sampling_fraction: float


def population_uniques(class_sizes: ArrayLike, population_size: float) -> PopulationUniques:
    r"""Population uniques by Dankar et al.'s (2012) decision rule.

    With no sample uniques the estimate is 0. At a sampling fraction :math:`\pi \le 0.1` the
    rule takes Pitman (Zayatz when Pitman fails); above it, the smaller of Zayatz and SNB
    (Zayatz when SNB fails). Dankar, El Emam, Neisa & Roffey, *Estimating the
    re-identification risk of clinical data sets*, BMC Medical Informatics and Decision Making
    12:66, 2012 (the rule ARX's ``RiskModelPopulationUniqueness`` implements). The rule was
    chosen on clinical data sets for the smallest error; the simulation in BENCHMARKS.md
    checks it against a known truth.

    Examples
    --------
    >>> r = population_uniques([2, 2, 3], 100)
    >>> r.estimate, r.estimator
    (0.0, 'none')
    """
    j, _, n, big_n = _prepare(class_sizes, population_size)
    pi = n / big_n
    if j[0] != 1:
        return PopulationUniques(0.0, "none", "no sample uniques", 0.0, 0.0, 0.0, pi)
    zay = zayatz_uniques(class_sizes, big_n)
    pit = pitman_uniques(class_sizes, big_n)
    snb = snb_uniques(class_sizes, big_n)
    if pi <= DANKAR_FRACTION:
        if pit is not None and pit > 0:
            return PopulationUniques(
                pit, "pitman", f"sampling fraction {pi:.3g} <= 0.1", pit, zay, snb, pi
            )
        return PopulationUniques(
            zay, "zayatz", "sampling fraction <= 0.1 but Pitman failed", pit, zay, snb, pi
        )
    if snb is not None and snb > 0:
        if zay < snb:
            why = f"sampling fraction {pi:.3g} > 0.1: Zayatz below SNB"
            return PopulationUniques(zay, "zayatz", why, pit, zay, snb, pi)
        why = f"sampling fraction {pi:.3g} > 0.1: SNB below Zayatz"
        return PopulationUniques(snb, "snb", why, pit, zay, snb, pi)
    return PopulationUniques(
        zay, "zayatz", "sampling fraction > 0.1 and SNB failed", pit, zay, snb, pi
    )
