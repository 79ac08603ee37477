r"""Can the records tell a tuple inside the lift box from one outside it? The held-out
interval's guard against a fitted G that puts mass where the records never showed any.

**Why.** The fitted prior G of a value (:mod:`._prior`) is smooth, and the records constrain it
through the tuples' counts. A tuple of one record says only whether it holds the value, a tuple
of two says a little about the spread: where nearly every tuple has one or two records, the
counts identify G's mean and spread but not its shape. A population whose tuples' shares all lie
just outside the box (two spikes, one either side: BENCHMARKS.md, the calibration setting
``gross``) then fits a G with mass inside the box about as well as the truth, and a tuple that a
watchdog keeps *because* its counts sit inside the box gets P(breaks) of a few per cent under
that G, against a truth of one: the interval covered the true breach share in 45 % of the seeds.

**The test** (a likelihood-ratio test of "every tuple breaks", Wilks 1938). Per value and box,
on the tuples the prior was fitted on (:class:`~._prior.Fitted`: distinct rows of counts k_x of
n_x, multiplicities m_x, size strata), each size stratum s gets the **gap prior**

.. math:: G^{gap}_s = \arg\max_G \sum_{x \in s} m_x \log \sum_r L_x(r)\, G(r)\,
          1[\operatorname{expit}(\eta_x + r) \notin \text{box}],

L_x(r) the binomial likelihood of the tuple's counts at share expit(eta_x + r): the G on the grid
that best explains the stratum's counts with every tuple outside the box (EM, Dempster, Laird &
Rubin 1977; Laird's 1978 non-parametric MLE under the constraint). eta_x and G_s are those of the
fitted family; where it has main effects and they reject the gap priors, the same test is made
on the family without main effects (its own G_s; eta the intercept logit p): main effects fitted
on noise move each tuple's box on the r scale, and "every tuple breaks" is about the shares.
The deficit of the gap priors against the fitted ones is

.. math:: D = \sum_x m_x \log L_x \cdot G_{s(x)}
          - \sum_s \sum_{x \in s} m_x \log L_x \cdot (G^{gap}_s \circ 1_{out,x}).

With :math:`D \le \chi^2_{1}(0.95) / 2` (:data:`DEFICIT`) the records do not reject "every tuple
breaks" against the fitted model: the gap priors are **adopted**, and the check's interval has
an upper end of at least the 97.5 % quantile of the breach share with every one-tuple cell's
P_c under its stratum's gap prior (:func:`gap_outside`; :class:`~._breach.BreachCheck`). Where
the records do reject it (tables whose tuples have enough records to show shares inside the
box: COMPAS, the other calibration settings, a deficit of 10-2,000, bar one ``planted`` seed in
20 for its 1 % value) nothing changes, to the bit.

**Scope.** Only cells of one tuple are judged again: their P_c is their tuple's posterior alone,
which rests on G's shape; a merged cell's share is an average whose Beta leans on the tuples'
means. The box is the point p(s)'s (the p(s) replicates move it by less than the spikes' gap).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from ._prior import GRID, STRATA, Fitted, _likelihood, log_prior, stratum_of

__all__ = ["DEFICIT", "Gap", "fitted_log_likelihood", "gap_outside", "gap_prior"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Largest deficit (log-likelihood) at which the gap priors are adopted: chi2_1(0.95) / 2.
DEFICIT = 1.920729410347062
#: EM iterations of a gap prior, and the gain in log-likelihood (per tuple) that ends them.
EM_STEPS = 2_000
EM_TOL = 1e-9


@dataclass(frozen=True)
class Gap:
    """Adopted gap priors: one per size stratum (rows: :func:`~._prior.stratum_of`; columns:
    GRID), and the eta they are on (a family without main effects: its intercept; else None,
    the fitted family's eta of each tuple)."""

    priors: FloatArray
    eta: float | None


def _outside(eta: FloatArray, bounds: tuple[float, float]) -> NDArray[np.bool_]:
    """Rows x GRID: whether the share expit(eta + r) lies outside ``bounds`` (computed once
    per distinct eta: the fit's rows share a few rounded etas, one without main effects)."""
    distinct, row = np.unique(eta, return_inverse=True)
    theta = expit(distinct[:, None] + GRID[None, :])
    return np.asarray((theta < bounds[0]) | (theta > bounds[1]))[row.reshape(-1)]


def fitted_log_likelihood(fitted: Fitted) -> float:
    """sum_x m_x log L_x . G_s(x): the log-likelihood of the fit's rows under the fitted priors
    (the deficit's first term; it does not depend on the box, so a caller asking for several
    boxes computes it once and passes it to :func:`gap_prior`)."""
    lik, mult, stratum = fitted.lik, fitted.mult, fitted.stratum
    out = 0.0
    for s in np.unique(stratum):
        sel = stratum == s
        g = np.exp(log_prior(fitted.alpha[1 + s]))
        out += float(mult[sel] @ np.log(np.maximum(lik[sel] @ g, 1e-300)))
    return out


def gap_prior(
    fitted: Fitted, bounds: tuple[float, float], fitted_ll: float | None = None
) -> Gap | None:
    """The gap priors of ``bounds`` on the family ``fitted`` when the records do not reject
    them (deficit at most :data:`DEFICIT`), else None (module docstring). Both sides are
    summed over the fit's likelihood rows (:attr:`~._prior.Fitted.lik`, scaled to max 1 per
    row: the scales cancel in the deficit); ``fitted_ll``: :func:`fitted_log_likelihood` of
    ``fitted`` when the caller has it."""
    lik, mult, stratum = fitted.lik, fitted.mult, fitted.stratum
    if not len(mult):
        return None
    if fitted_ll is None:
        fitted_ll = fitted_log_likelihood(fitted)
    out = _outside(fitted.row_eta, bounds)
    if not out.any(1).all():
        return None  # some tuple cannot lie outside the box: "every tuple breaks" is impossible
    rows = np.where(out, lik, 0.0)
    best = np.log(np.maximum(rows.max(1), 1e-300))  # each row at its best outside point
    if float(mult @ best) < fitted_ll - DEFICIT:
        return None
    priors = np.zeros((len(STRATA) + 1, len(GRID)))
    gap_ll = 0.0
    for s in np.unique(stratum):
        sel = stratum == s
        priors[s], part = _em(rows[sel], mult[sel])
        gap_ll += part
    if gap_ll < fitted_ll - DEFICIT:
        return None
    intercept = float(fitted.row_eta[0]) if np.isinf(fitted.candidate.ridge) else None
    return Gap(priors, intercept)


def _em(rows: FloatArray, mult: FloatArray) -> tuple[FloatArray, float]:
    """argmax_G sum_x m_x log(rows_x . G) over G on the grid (EM from the uniform G), and its
    log-likelihood."""
    total = float(mult.sum())
    g = np.full(rows.shape[1], 1.0 / rows.shape[1])
    m = np.maximum(rows @ g, 1e-300)
    ll = float(mult @ np.log(m))
    for _ in range(EM_STEPS):
        g = g * (rows.T @ (mult / m)) / total
        g /= g.sum()
        m = np.maximum(rows @ g, 1e-300)
        new = float(mult @ np.log(m))
        gain, ll = new - ll, new
        if gain <= EM_TOL * total:
            break
    return g, ll


def gap_outside(
    gap: Gap, k: FloatArray, n: FloatArray, eta: FloatArray, bounds: tuple[float, float]
) -> FloatArray:
    """P(share outside ``bounds``) of tuples of ``k`` of ``n`` records (at the fitted family's
    ``eta``) under their size stratum's gap prior (:func:`gap_prior`):
    sum_r L(r) G(r) 1_out(r) / sum_r L(r) G(r)."""
    if not len(k):
        return np.zeros(0)
    at = eta if gap.eta is None else np.full(len(k), gap.eta)
    weight = _likelihood(k, n, at) * gap.priors[stratum_of(n)]
    mass = weight.sum(1)
    out = np.where(_outside(at, bounds), weight, 0.0).sum(1)
    return np.asarray(np.where(mass > 0, out / np.maximum(mass, 1e-300), 1.0), dtype=float)
