r"""Cross-fitted per-record log-lift with resampling intervals (issue #16, items 3 and 4).

The records used for training are scored by models fitted on the other folds. The interval of
each record's log-lift comes from resampling the selected model family (its regularisation fixed
at the value chosen on the full data), two ways:

- ``interval="jackknife"`` (default, free): the grouped (delete-a-fold) jackknife over the
  ``cv`` fold models already fitted for cross-fitting,
  :math:`v = \frac{K-1}{K}\sum_k (\hat i_{(k)} - \bar i)^2`, with a Student-t interval on
  K - 1 degrees of freedom (Efron & Tibshirani 1993, §11.5; Shao & Tu 1995, §2.3);
- ``interval="bootstrap"``: ``n_bootstrap`` refits on resamples, normal interval.

With ``n_repeats = R > 1`` the ``cv``-fold split is drawn R times and each record's score is the
mean of its R out-of-fold predictions (never from a model that saw it). A fold model sees
(K - 1) / K of the records, so one split leaves its scores about sqrt(K / (K - 1)) noisier than
the full model's (1.12x at K = 5); the mean over R splits has variance
:math:`(1 + 1/(R(K-1)))\,v` for a full-data variance v (two fold models from different splits
share about ((K-1)/K)^2 of the records, so their covariance is about v): 1.04x in RMSE at the
default R = 3 (EM and network initialisations differ between fold models too: averaging helps).
The jackknife variance is averaged over the R splits.

Both rather than deep ensembles alone because they apply to every family (logistic regression
and trees have no random initialisation to vary) and their spread is the sampling variability
(plus, for networks, the initialisation) of the chosen model.

**Model error.** A resampling spread of one family says nothing about that family's bias (a
misspecified family, a worse EM optimum): on the issue's benchmarks the misses of the jackknife
interval were bias. When :class:`AutoLift` stacks several families (its default), each record's
variance also gets the families' weighted disagreement,
:math:`v_b = \sum_f w_f (\hat i_f - \bar i)^2` (:mod:`privwatch.estimators._pooled`): the
between-model term of the law of total variance of a model average (Hoeting, Madigan, Raftery &
Volinsky 1999, *Bayesian model averaging: a tutorial*, Statist. Sci. 14, eq. 2-3; the mixture
variance of deep ensembles, Lakshminarayanan, Pritzel & Blundell 2017, NeurIPS, here across
model families with the super-learner weights). The interval is
:math:`\hat i \pm q \sqrt{v_{jack}(1 + 1/(R(K-1))) + v_b}`, with :math:`v_b` of the cross-fitted
records taken from the fold stacks that scored them. It is a proxy for model error, not a bound:
where every weighted family errs the same way (or one family takes all the weight) it adds
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtri, stdtrit  # the normal and Student t quantiles

from .._rng import check_rng
from .._validation import check_open_fraction, check_positive_int
from ..exceptions import ValidationError
from ._lift import FloatArray, LiftModel
from ._preprocess import as_frame
from ._progress import progress_bar
from ._stacking import LiftStack, fit_together, stackable

__all__ = ["FLAG_RULES", "LiftScores", "bootstrap_spread", "cross_fit", "fold_deviations"]

FLAG_RULES = ("interval", "conservative", "point")
INTERVALS = ("jackknife", "bootstrap", None)


@dataclass(frozen=True)
class LiftScores:
    """Per-record log-lift with an interval (rows = records, columns = sorted sensitive values).

    ``fold[i]`` is the fold (of the first split) whose model scored record ``i`` without having
    seen it (-1: scored by the model fitted on all records, a record not used for training).
    ``lower``/``upper`` bound each log-lift at confidence ``level`` (NaN where no bootstrap ran).
    """

    log_lift: FloatArray
    lower: FloatArray
    upper: FloatArray
    fold: NDArray[np.int64]
    level: float
    sensitive_labels: list[Any]
    interval_method: str
    #: The standard deviation behind ``lower``/``upper`` (None where no interval was asked).
    sd: FloatArray | None = None

    @property
    def risk(self) -> FloatArray:
        """Point risk ``max_s |i(s, x)|`` of each record."""
        return np.asarray(np.abs(self.log_lift).max(axis=1), dtype=np.float64)

    def flags(self, epsilon: float, rule: str = "interval") -> NDArray[np.bool_]:
        """Records at risk at ``epsilon``.

        ``rule="interval"``: flagged only when some log-lift's interval lies wholly outside
        ``[-epsilon, epsilon]`` (the estimate is surely above epsilon); ``"conservative"``:
        flagged when any interval reaches outside it (not surely below); ``"point"``: the point
        estimate alone. Without intervals (NaN) the first two fall back to the point estimate.
        """
        if rule not in FLAG_RULES:
            raise ValidationError(f"`rule` must be one of {FLAG_RULES}; got {rule!r}.")
        point = np.abs(self.log_lift) > epsilon
        if rule == "point" or np.isnan(self.lower).all():
            return np.asarray(point.any(axis=1))
        if rule == "interval":
            sure = (self.lower > epsilon) | (self.upper < -epsilon)
            return np.asarray(sure.any(axis=1))
        maybe = (self.upper > epsilon) | (self.lower < -epsilon)
        return np.asarray(maybe.any(axis=1))

    def to_frame(self, index: pd.Index | None = None) -> pd.DataFrame:
        """One row per record: risk, fold, and per sensitive value the log-lift and its bounds."""
        data: dict[str, Any] = {"risk": self.risk, "fold": self.fold}
        for j, lab in enumerate(self.sensitive_labels):
            data[f"log_lift[{lab}]"] = self.log_lift[:, j]
            data[f"lower[{lab}]"] = self.lower[:, j]
            data[f"upper[{lab}]"] = self.upper[:, j]
        return pd.DataFrame(data, index=index)


def _seeds(estimator: LiftModel, n: int) -> list[int]:
    rng = getattr(estimator, "rng", None)
    g = check_rng(rng if rng is not None else 0)
    return [int(v) for v in g.integers(0, 2**31 - 1, size=n)]


def _with_seed(estimator: LiftModel, seed: int) -> LiftModel:
    if "rng" in estimator.get_params():
        estimator.set_params(rng=seed)
    return estimator


def bootstrap_spread(
    estimator: LiftModel,
    frame: pd.DataFrame,
    s: NDArray[Any],
    *,
    n_bootstrap: int,
    max_rows: int,
    progress: bool,
) -> list[LiftModel]:
    """Fit ``n_bootstrap`` copies of the fitted ``estimator``'s frozen family on resamples.

    Resamples have ``m = min(n, max_rows)`` rows; with m < n the spread is later scaled by
    ``sqrt(m / n)`` (m-out-of-n bootstrap of a root-n estimator).
    """
    n = len(frame)
    m = min(n, max_rows)
    seeds = _seeds(estimator, n_bootstrap + 1)
    g = np.random.default_rng(seeds[0])
    members = [_with_seed(estimator.frozen_estimator(), seeds[b + 1]) for b in range(n_bootstrap)]
    resamples = [g.integers(0, n, size=m) for _ in range(n_bootstrap)]
    with progress_bar(progress, "bootstrap", 1) as advance:  # the refits train side by side
        data = [(frame.iloc[idx].reset_index(drop=True), s[idx]) for idx in resamples]
        fit_together(members, data)
        advance()
    return members


def cross_fit(
    estimator: LiftModel,
    X: pd.DataFrame | ArrayLike,
    s: ArrayLike,
    *,
    cv: int = 5,
    n_repeats: int = 3,
    level: float = 0.9,
    interval: str | None = "jackknife",
    n_bootstrap: int = 20,
    max_bootstrap_rows: int = 50_000,
    progress: bool = False,
) -> LiftScores:
    """Fit ``estimator`` on all records, then score each record with the models (one per
    split, ``n_repeats`` splits) from the folds that did not see it; intervals from the grouped
    jackknife or a bootstrap of the selected family (see module doc).

    The model family and its regularisation are selected once on all records (folds refit that
    family with the selected strength); same ``rng`` on the estimator -> same folds -> same result.
    """
    check_positive_int(cv, "cv")
    check_positive_int(n_repeats, "n_repeats")
    if cv < 2:
        raise ValidationError(f"`cv` must be at least 2; got {cv}.")
    check_open_fraction(level, "level")
    if interval not in INTERVALS:
        raise ValidationError(f"`interval` must be one of {INTERVALS}; got {interval!r}.")
    if interval == "bootstrap":
        check_positive_int(n_bootstrap, "n_bootstrap")
    check_positive_int(max_bootstrap_rows, "max_bootstrap_rows")
    frame = as_frame(X).reset_index(drop=True)
    labels = np.asarray(s)
    stack = LiftStack()
    if stackable(estimator):  # the full fit and the folds' train side by side
        stack.add(estimator, frame, labels)
    else:
        estimator.fit(frame, labels)
    ll, between, fold, members = _out_of_fold(
        estimator, frame, labels, cv, n_repeats, progress, stack
    )
    lower = np.full_like(ll, np.nan)
    upper = np.full_like(ll, np.nan)
    sd: FloatArray | None = None
    method = "none"
    if interval == "jackknife":
        _keep_resamples(estimator, members, "jackknife", 1.0, cv)
        method = (
            f"grouped jackknife over the {cv} fold models"
            + (f" (mean over {n_repeats} splits)" if n_repeats > 1 else "")
            + f", t interval ({cv - 1} df)"
        )
    elif interval == "bootstrap":
        refits = bootstrap_spread(
            estimator,
            frame,
            labels,
            n_bootstrap=n_bootstrap,
            max_rows=max_bootstrap_rows,
            progress=progress,
        )
        scale = np.sqrt(min(len(frame), max_bootstrap_rows) / len(frame))
        _keep_resamples(estimator, refits, "bootstrap", float(scale), None)
        method = f"bootstrap ({n_bootstrap} refits, normal interval)"
    if interval is not None:
        # fold models saw (cv - 1) / cv of the records; R splits averaged: see the module doc
        var = spread(estimator, frame) ** 2 * (1 + 1 / (n_repeats * (cv - 1)))
        sd = np.sqrt(var + between)
        z = critical_value(estimator, level)
        if between.any():
            method += " + between-family variance of the stack"
        lower, upper = ll - z * sd, ll + z * sd
    return LiftScores(ll, lower, upper, fold, level, list(estimator.sensitive_labels_), method, sd)


def _out_of_fold(
    estimator: LiftModel,
    frame: pd.DataFrame,
    labels: NDArray[Any],
    cv: int,
    n_repeats: int,
    progress: bool,
    stack: LiftStack,
) -> tuple[FloatArray, FloatArray, NDArray[np.int64], list[LiftModel]]:
    """Each record's log-lift averaged over the ``n_repeats`` fold models that did not see it,
    the between-family variance of those models, its fold in the first split, and the models.
    The fold models join ``stack`` (holding the full fit when it is stackable) and train with
    it; models it cannot hold are fitted one by one."""
    from sklearn.model_selection import RepeatedStratifiedKFold

    codes = estimator._sensitive_codes(labels)
    if np.bincount(codes).min() < cv:
        raise ValidationError(
            f"`cv` must be at most the count of the rarest sensitive value "
            f"({int(np.bincount(codes).min())}); got {cv}."
        )
    seeds = _seeds(estimator, cv * n_repeats + 1)
    folds = RepeatedStratifiedKFold(n_splits=cv, n_repeats=n_repeats, random_state=seeds[0])
    splits = list(folds.split(np.zeros(len(frame)), codes))
    members = [_with_seed(estimator.frozen_estimator(), seeds[j + 1]) for j in range(len(splits))]
    for member, (tr, _) in zip(members, splits, strict=True):
        if stackable(member):
            stack.add(member, frame.iloc[tr], labels[tr])
        else:
            member.fit(frame.iloc[tr], labels[tr])
    if stack.plans:
        stack.fit()
    ll = np.zeros((len(frame), len(estimator.sensitive_labels_)))
    between = np.zeros_like(ll)  # the scoring fold models' between-family variance
    fold = np.empty(len(frame), dtype=np.int64)
    with progress_bar(progress, "cross-fitting", cv * n_repeats) as advance:
        for j, (member, (_, te)) in enumerate(zip(members, splits, strict=True)):
            ll[te] += _aligned(member, estimator, frame.iloc[te]) / n_repeats
            between[te] += model_variance(member, frame.iloc[te]) / n_repeats
            if j < cv:
                fold[te] = j
            advance()
    return ll, between, fold, members


def _keep_resamples(
    estimator: LiftModel, members: list[LiftModel], kind: str, scale: float, groups: int | None
) -> None:
    """Leave the resampled models on ``estimator`` for :func:`spread` and :func:`critical_value`
    (``groups``: the jackknife's fold count)."""
    estimator.resamples_ = members
    estimator.resample_kind_ = kind
    estimator.resample_scale_ = scale
    if groups is not None:
        estimator.resample_groups_ = groups


def _aligned(member: LiftModel, full: LiftModel, frame: pd.DataFrame) -> FloatArray:
    """The member's log-lift with columns in the full estimator's label order (a fold may lack a
    rare label only if cv exceeds its count, which :func:`cross_fit` refuses)."""
    out = member.log_lift(frame)
    if list(member.sensitive_labels_) != list(full.sensitive_labels_):  # pragma: no cover
        raise ValidationError("a fold lost a sensitive value; lower `cv`.")
    return out


def spread(estimator: LiftModel, X: pd.DataFrame | ArrayLike) -> FloatArray:
    """Resampling standard deviation of each record's log-lift (records x sensitive values):
    grouped jackknife or bootstrap, as :func:`cross_fit` left it on ``estimator``."""
    members = getattr(estimator, "resamples_", None)
    if not members:
        raise ValidationError(
            "the log-lift interval needs resampled models: call fit_score(...) with "
            "interval='jackknife' or 'bootstrap' first."
        )
    draws = np.stack([m.log_lift(X) for m in members])
    if estimator.resample_kind_ == "jackknife":
        k = int(getattr(estimator, "resample_groups_", len(members)))
        groups = draws.reshape(len(members) // k, k, *draws.shape[1:])
        dev = groups - groups.mean(axis=1, keepdims=True)
        var = (k - 1) / k * (dev**2).sum(axis=1).mean(axis=0)
        return np.asarray(np.sqrt(var), dtype=np.float64)
    return np.asarray(draws.std(axis=0, ddof=1) * estimator.resample_scale_, dtype=np.float64)


def fold_deviations(estimator: LiftModel, X: pd.DataFrame | ArrayLike) -> FloatArray:
    r"""The grouped jackknife's error directions: members x records x sensitive values, scaled
    so that :math:`e = \sum_m \xi_m B_m`, :math:`\xi \sim N(0, I)`, has the jackknife
    covariance across records and values,

    .. math:: B_{(r,k)} = \sqrt{\tfrac{K-1}{K R}}\,(\hat i_{(r,k)} - \bar i_{(r)}),
              \qquad \sum_m B_m^2 = v_{jack}

    (fold model k of split r; :func:`spread` squared is its diagonal). One draw is an error of
    the fitted model shared by every record it scores (the model's sampling error moves the
    log-lift of neighbouring records together), rank ``R (K - 1)``. Only the grouped jackknife
    (:func:`cross_fit` with ``interval="jackknife"``)."""
    members = getattr(estimator, "resamples_", None)
    if not members or getattr(estimator, "resample_kind_", None) != "jackknife":
        raise ValidationError(
            "the fold models' error directions need the grouped jackknife: call "
            "fit_score(...) with interval='jackknife' first."
        )
    k = int(getattr(estimator, "resample_groups_", len(members)))
    draws = np.stack([m.log_lift(X) for m in members])
    repeats = len(members) // k
    groups = draws.reshape(repeats, k, *draws.shape[1:])
    dev = (groups - groups.mean(axis=1, keepdims=True)) * np.sqrt((k - 1) / (k * repeats))
    return np.asarray(dev.reshape(draws.shape), dtype=np.float64)


def model_variance(estimator: LiftModel, X: pd.DataFrame | ArrayLike) -> FloatArray:
    """Between-family variance of each log-lift (a stack's members' weighted disagreement; see
    :mod:`privwatch.estimators._pooled`); zeros for a single family."""
    fn = getattr(estimator, "model_variance", None)
    if fn is None:
        return np.zeros((len(as_frame(X)), len(estimator.sensitive_labels_)))
    return np.asarray(fn(X), dtype=np.float64)


def critical_value(estimator: LiftModel, level: float) -> float:
    """Two-sided quantile: Student t with K - 1 df for the jackknife, normal for the bootstrap."""
    q = 0.5 + level / 2
    if estimator.resample_kind_ == "jackknife":
        k = int(getattr(estimator, "resample_groups_", len(estimator.resamples_)))
        return float(stdtrit(k - 1, q))
    return float(ndtri(q))
