r"""The held-out breach share of a learned watchdog's release, with a 95 % interval (issue #41).

A learned watchdog (Hsu, Asoodeh and Calmon §IV) releases each record unchanged when its
estimated risk :math:`\max_s |\hat i(s, x)|` is within epsilon and merges the flagged records
into one marker. Its **breach share** is the population mass whose released value has a true
lift beyond epsilon:

.. math:: B = P(\text{kept},\ \max_s |i(s, X)| > \varepsilon)
          + P(\text{flagged})\,\mathbb 1\{\max_s |\log p(s \mid \text{flagged}) / p(s)|
          > \varepsilon\}

(one-sided, ``disclosure="positive"``: the upper face only). It is estimated from the
**cross-fitted** log-lift of each record (scored by fold models that did not see it), made
honest in two steps.

**Recalibration on held-out labels.** A regularised lift model shrinks every record the same
way (its lifts near the edge of the box are estimated too close to 0, by the fold models alike,
so their spread does not show it). The cross-fitted log-posteriors
:math:`L_{is} = \hat i_{is} + \log p(s)` are recalibrated against the records' own labels,
which the fold models scoring them did not see (logistic recalibration, Cox 1958, *Two further
applications of a model for binary regression*, Biometrika 45; in its multinomial form):

.. math:: \log p(s \mid x_i) = a_s + b\,L_{is} + c\,L_{is}^2 - \log \textstyle\sum_t
          e^{a_t + b L_{it} + c L_{it}^2}, \qquad a_0 = 0,

fitted by Newton's method with a weak Gaussian prior around the identity (b = 1, c = 0, sd
:data:`PRIOR_SD`); :math:`\theta = (a, b, c)` has the posterior's Laplace covariance (the
inverse of the penalised information). The recalibrated log-lift is
:math:`\tilde i_{is} = \log p(s \mid x_i) - \log p(s)` (:func:`recalibrate`).

**The estimate.** A kept record breaks with probability
:math:`P_i = \max_s P(|N(\tilde i_{is}, \mathrm{sd}_{is}^2)| > \varepsilon)` (``sd``: the fold
models' jackknife spread); the marker breaks with the posterior probability that
:math:`p(s \mid \text{flagged})` (Dirichlet of the flagged records' labels) and :math:`p(s)`
(Dirichlet of all labels) are further apart than epsilon. The estimate is
:math:`\sum_{kept} P_i / n` plus the flagged share times the marker's probability.

**The interval.** ``replicates`` replicates of the model's error: the recalibration
:math:`\theta_r \sim N(\hat\theta, \Sigma)`, and, given ``shared`` (the grouped jackknife's
error directions :math:`B_m`, :func:`~privwatch.estimators.fold_deviations`), the fitted
model's own sampling error :math:`e_r = \sum_m \xi_{rm} B_m`, :math:`\xi_r \sim N(0, I)`,
added to every kept record's log-lift at once (an error of the fitted model moves the
log-lift of many records the same way), with only the rest of each record's variance,
:math:`\mathrm{sd}^2 - \sum_m B_m^2` (the cross-fitting's extra noise, the stack's
between-family term), independent per record. The estimate is then the mean over the
replicates of :math:`\sum_{kept} P_i(\theta_r, e_r) / n` (the posterior mean) plus the marker's
share. The marker's shares are drawn from their Dirichlets. Within a replicate, the number of
kept records breaking is drawn from its normal approximation (a sum of independent Bernoulli
:math:`P_i`) and the population share from a Beta of the records breaking and not (the
binomial sampling of records, as in the plug-in check). The interval is the 2.5 % and 97.5 %
quantiles of ``draws`` draws. Without ``shared`` every record's spread is independent: on the
benchmark's known densities (``benchmarks/bench_learned_calibration.py``, issue #41) that
interval covered the true breach share in 50-67 % of the seeds where kept records break,
because the fitted model's error is shared: per record, the recalibrated log-lift's error was
about the jackknife's size (0.8-1.4 sd), but in a given fit it leant one way over the records
near the edge (mean -0.1 to -0.7 sd), which independent per-record errors average away.

**Flags by a margin.** :func:`margin_flags` flags a record when its probability of breaking
exceeds ``1 - confidence``, so a caller can walk the search's credible margins until the
verdict holds (the flags aim at the held-out figure, not at the in-sample one); the audit flags
on the recalibrated log-lift.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr  # the normal cdf (scipy.stats' own, without its import cost)

from .._rng import RNGLike, check_rng
from .._validation import check_nonnegative, check_positive_int
from ..exceptions import ValidationError

if TYPE_CHECKING:  # not at run time: _lift loads scikit-learn
    from ._lift import FloatArray

__all__ = [
    "Calibration",
    "LearnedBreach",
    "calibrate",
    "learned_breach",
    "margin_flags",
    "recalibrate",
    "record_breach",
]

#: The largest |log-lift| or spread accepted (nats): beyond it a figure is not a log-lift.
LIMIT = 700.0
#: The prior standard deviation of the recalibration's slope and curvature around the identity.
PRIOR_SD = 1.0


@dataclass(frozen=True)
class LearnedBreach:
    """Held-out figures of a learned watchdog's release (see the module docstring)."""

    folds: int
    n_records: int
    breach_probability: float
    breach_probability_ci: tuple[float, float]
    kept_breach: float
    flagged_share: float
    marker_log_lift: float
    marker_breach_probability: float
    #: The recalibration (intercepts a_1.., slope b, curvature c) and its standard errors.
    calibration: tuple[float, ...] = ()
    calibration_se: tuple[float, ...] = ()
    interval: str = (
        "95 % interval: the cross-fitted log-lift recalibrated on held-out labels (Cox), the "
        "recalibration drawn from its Laplace posterior (error shared by all records), each "
        "record's fold-model spread independent; the merged marker's shares from "
        "Dirichlet(labels), record sampling Beta(records breaking, not)"
    )

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _matrix(x: object, name: str, low: float) -> FloatArray:
    raw = np.asarray(x)
    if raw.dtype.kind not in "biuf" or raw.ndim != 2 or raw.size == 0:
        raise ValidationError(
            f"`{name}` must be a non-empty 2-D array of real numbers (records x sensitive "
            f"values); got dtype {raw.dtype}, shape {raw.shape}."
        )
    arr = raw.astype(np.float64)
    if not np.isfinite(arr).all() or (arr < low).any() or (np.abs(arr) > LIMIT).any():
        raise ValidationError(
            f"`{name}` must hold finite numbers within [{max(low, -LIMIT):g}, {LIMIT:g}] nats; "
            f"got {arr.ravel()[:4].tolist()}..."
        )
    return arr


def _check(
    log_lift: object, sd: object, epsilon: object, disclosure: object
) -> tuple[FloatArray, FloatArray, float]:
    ll = _matrix(log_lift, "log_lift", -LIMIT)
    spread = _matrix(sd, "sd", 0.0)
    if spread.shape != ll.shape:
        raise ValidationError(
            f"`sd` must have the shape of `log_lift` (records x values); got {spread.shape} and "
            f"{ll.shape}."
        )
    if disclosure not in ("both", "positive"):
        raise ValidationError(f"`disclosure` must be 'both' or 'positive'; got {disclosure!r}.")
    return ll, spread, check_nonnegative(epsilon, "epsilon", allow_inf=True)


def _vector(x: object, name: str, n: int, kind: str) -> NDArray[Any]:
    raw = np.asarray(x)
    if raw.dtype.kind not in kind or raw.shape != (n,):
        raise ValidationError(
            f"`{name}` must be a 1-D array of {'booleans' if kind == 'b' else 'integers'}, one "
            f"per record ({n}); got dtype {raw.dtype}, shape {raw.shape}."
        )
    return raw


def record_breach(
    log_lift: FloatArray, sd: FloatArray, epsilon: float, disclosure: str = "both"
) -> FloatArray:
    """Each record's probability that its true log-lift breaks epsilon, given its estimate
    and spread (records x values in; one probability per record out; the largest value's)."""
    ll, spread, eps = _check(log_lift, sd, epsilon, disclosure)
    return _breach(ll, spread, eps, str(disclosure))


def _breach(ll: FloatArray, sd: FloatArray, epsilon: float, disclosure: str) -> FloatArray:
    scale = np.maximum(sd, 1e-9)
    with np.errstate(over="ignore", invalid="ignore"):
        p = ndtr((ll - epsilon) / scale)  # P(Z > (epsilon - ll) / scale)
        if disclosure == "both":
            p = p + ndtr((-epsilon - ll) / scale)
    return np.asarray(np.nan_to_num(np.minimum(p, 1.0), nan=0.0).max(axis=1), dtype=np.float64)


def margin_flags(
    log_lift: FloatArray,
    sd: FloatArray,
    epsilon: float,
    disclosure: str = "both",
    confidence: float | None = None,
) -> NDArray[np.bool_]:
    """Records flagged at epsilon: on the point estimate (``confidence`` None), or when their
    probability of breaking exceeds ``1 - confidence`` (a credible margin)."""
    ll, spread, eps = _check(log_lift, sd, epsilon, disclosure)
    if confidence is None:
        faces = ll if disclosure == "positive" else np.abs(ll)
        return np.asarray(faces.max(axis=1) > eps)
    if not 0.0 < confidence < 1.0:
        raise ValidationError(f"`confidence` must be within (0, 1) or None; got {confidence!r}.")
    return np.asarray(_breach(ll, spread, eps, str(disclosure)) > 1.0 - confidence)


@dataclass(frozen=True)
class Calibration:
    """The recalibration of a log-lift model on held-out labels (see the module docstring):
    ``theta`` = (a_1, ..., a_{k-1}, b, c), its Laplace covariance, and the prior p(s)."""

    theta: FloatArray
    cov: FloatArray
    prior: FloatArray


def _features(log_post: FloatArray) -> FloatArray:
    """Per record and value: one-hot intercepts (values 1..k-1), L, L^2 (n x k x (k + 1))."""
    n, k = log_post.shape
    z = np.zeros((n, k, k + 1))
    z[:, np.arange(1, k), np.arange(k - 1)] = 1.0
    z[:, :, k - 1] = log_post
    z[:, :, k] = log_post**2
    return z


def _log_softmax(eta: FloatArray) -> FloatArray:
    eta = eta - eta.max(axis=1, keepdims=True)
    return np.asarray(eta - np.log(np.exp(eta).sum(axis=1, keepdims=True)), dtype=np.float64)


def calibrate(log_lift: FloatArray, s_codes: NDArray[np.int64]) -> Calibration:
    """Fit the recalibration of cross-fitted log-lifts on the records' labels (Newton's method,
    Gaussian prior sd :data:`PRIOR_SD` on the slope and curvature around the identity)."""
    ll = _matrix(log_lift, "log_lift", -LIMIT)
    n, k = ll.shape
    codes = np.asarray(_vector(s_codes, "s_codes", n, "iu"), dtype=np.int64)
    prior = np.bincount(codes, minlength=k).astype(float) / n
    if (prior <= 0).any():
        raise ValidationError("`s_codes` must hold every sensitive value at least once.")
    z = _features(np.clip(ll + np.log(prior), -LIMIT, 0.0))
    centre = np.zeros(k + 1)
    centre[k - 1] = 1.0
    penalty = np.zeros(k + 1)
    penalty[k - 1 :] = 1.0 / PRIOR_SD**2
    theta = centre.copy()
    observed = z[np.arange(n), codes].sum(axis=0)
    hess = np.eye(k + 1)
    for _ in range(50):
        p = np.exp(_log_softmax(z @ theta))
        zbar = np.einsum("is,isd->id", p, z)
        grad = observed - zbar.sum(axis=0) - penalty * (theta - centre)
        hess = np.einsum("is,isd,ise->de", p, z, z) - zbar.T @ zbar + np.diag(penalty)
        step = np.linalg.solve(hess + 1e-9 * np.eye(k + 1), grad)
        theta = theta + step
        if np.abs(step).max() < 1e-8:
            break
    cov = np.linalg.inv(hess + 1e-9 * np.eye(k + 1))
    return Calibration(theta, (cov + cov.T) / 2, prior)


def recalibrate(log_lift: FloatArray, calibration: Calibration, theta: object = None) -> FloatArray:
    """The recalibrated log-lift :math:`\\log p(s \\mid x) - \\log p(s)` (``theta``: a draw
    of the recalibration; None: its fit)."""
    ll = np.asarray(log_lift, dtype=np.float64)
    t = calibration.theta if theta is None else np.asarray(theta, dtype=np.float64)
    z = _features(np.clip(ll + np.log(calibration.prior), -LIMIT, 0.0))
    out = _log_softmax(z @ t) - np.log(calibration.prior)
    return np.asarray(np.clip(out, -LIMIT, LIMIT), dtype=np.float64)


def _basis(shared: object, shape: tuple[int, ...]) -> FloatArray:
    raw = np.asarray(shared)
    if raw.dtype.kind not in "biuf" or raw.ndim != 3 or raw.shape[1:] != shape or not raw.size:
        raise ValidationError(
            f"`shared` must be a 3-D array of real numbers (members x records x values, the "
            f"records and values of `log_lift`: {shape}); got dtype {raw.dtype}, shape "
            f"{raw.shape}."
        )
    arr = raw.astype(np.float64)
    if not np.isfinite(arr).all() or (np.abs(arr) > LIMIT).any():
        raise ValidationError(f"`shared` must hold finite numbers within +-{LIMIT:g} nats.")
    return arr


def _marker_breaks(
    counts: FloatArray, flagged: FloatArray, epsilon: float, disclosure: str, size: int,
    g: np.random.Generator,
) -> NDArray[np.bool_]:  # fmt: skip
    """Draws of whether the merged marker's lift breaks epsilon (Dirichlet(0.5 + counts))."""
    if flagged.sum() <= 0:
        return np.zeros(size, dtype=bool)
    prior = g.dirichlet(counts + 0.5, size=size)
    given = g.dirichlet(flagged + 0.5, size=size)
    lift = np.log(given / prior)
    faces = lift if disclosure == "positive" else np.abs(lift)
    return np.asarray(faces.max(axis=1) > epsilon)


def learned_breach(
    log_lift: FloatArray,
    sd: FloatArray,
    flags: NDArray[np.bool_],
    s_codes: NDArray[np.int64],
    epsilon: float,
    disclosure: str = "both",
    *,
    folds: int = 5,
    calibration: Calibration | None = None,
    draws: int = 2000,
    replicates: int = 20,
    rng: RNGLike = 0,
    shared: FloatArray | None = None,
) -> LearnedBreach:
    """The held-out breach share of the release that keeps the unflagged records and merges
    the flagged ones (see the module docstring). ``log_lift`` and ``sd``: each record's
    cross-fitted log-lift and its spread (records x sensitive values); ``s_codes``: each
    record's sensitive value (column index); ``calibration``: :func:`calibrate` of ``log_lift``
    on ``s_codes`` (None: fitted here); ``shared``: the fold models' error directions
    (members x records x values, :func:`~privwatch.estimators.fold_deviations`), drawn as the
    error shared by every record (None: each record's spread independent)."""
    ll, spread, eps = _check(log_lift, sd, epsilon, disclosure)
    disc = str(disclosure)
    n, k = ll.shape
    flags = np.asarray(_vector(flags, "flags", n, "b"), dtype=bool)
    codes = np.asarray(_vector(s_codes, "s_codes", n, "iu"), dtype=np.int64)
    if (codes < 0).any() or (codes >= k).any():
        raise ValidationError(
            f"`s_codes` must be column indices of `log_lift` (0 to {k - 1}); got "
            f"{int(codes.min())} to {int(codes.max())}."
        )
    cal = calibrate(ll, codes) if calibration is None else calibration
    g = check_rng(rng)
    counts = np.bincount(codes, minlength=k).astype(float)
    flagged = np.bincount(codes[flags], minlength=k).astype(float)
    kept_ll, kept_sd = ll[~flags], spread[~flags]
    basis = None if shared is None else _basis(shared, ll.shape)[:, ~flags]
    if basis is not None:  # the rest of each record's variance stays its own
        kept_sd = np.sqrt(np.clip(kept_sd**2 - (basis**2).sum(axis=0), 0.0, None))
    marker_p = float(_marker_breaks(counts, flagged, eps, disc, 4000, g).mean())
    n_flag = float(flags.sum())
    replicates = check_positive_int(replicates, "replicates")
    per = max(1, check_positive_int(draws, "draws") // replicates)
    thetas = g.multivariate_normal(cal.theta, cal.cov, size=replicates, method="eigh")
    marker = _marker_breaks(counts, flagged, eps, disc, replicates, g)
    shares: list[FloatArray] = []
    expected: list[float] = []  # each replicate's expected count of kept records breaking
    for r in range(replicates):
        moved = kept_ll if basis is None else kept_ll + np.tensordot(
            g.standard_normal(len(basis)), basis, axes=1
        )  # fmt: skip
        p = _breach(recalibrate(moved, cal, thetas[r]), kept_sd, eps, disc)
        mean, var = float(p.sum()), float((p * (1 - p)).sum())
        expected.append(mean)
        broken = np.clip(g.normal(mean, np.sqrt(var), size=per), 0.0, float(len(p)))
        broken = broken + (n_flag if marker[r] else 0.0)
        # no record breaking and the marker within the box: a share of 0 (the 1e-3 only keeps
        # the Beta proper; its draws there are 1e-60 and smaller, not a lower end above 0)
        share = g.beta(broken + 1e-3, n - broken + 1e-3)
        shares.append(np.where(broken > 0, share, 0.0))
    if basis is None:
        kept_breach = float(_breach(recalibrate(kept_ll, cal), kept_sd, eps, disc).sum()) / n
    else:  # the mean over the shared errors: the posterior mean of the kept records' share
        kept_breach = float(np.mean(expected)) / n
    estimate = kept_breach + n_flag * marker_p / n
    lo, hi = np.quantile(np.concatenate(shares), [0.025, 0.975])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (flagged / max(n_flag, 1.0)) / (counts / n)
        marker_ll = np.log(np.maximum(ratio, 1e-12))
    faces = marker_ll if disc == "positive" else np.abs(marker_ll)
    return LearnedBreach(
        folds=folds,
        n_records=n,
        breach_probability=float(estimate),
        breach_probability_ci=(float(min(lo, estimate)), float(max(hi, estimate))),
        kept_breach=kept_breach,
        flagged_share=n_flag / n,
        marker_log_lift=float(faces.max()) if n_flag else 0.0,
        marker_breach_probability=marker_p,
        calibration=tuple(float(v) for v in cal.theta),
        calibration_se=tuple(float(v) for v in np.sqrt(np.clip(np.diag(cal.cov), 0.0, None))),
    )
