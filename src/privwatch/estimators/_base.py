"""The interface shared by every log-lift estimator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from .._base import check_is_fitted
from .._validation import check_open_fraction
from ..exceptions import ValidationError
from ..joint import encode_sensitive

if TYPE_CHECKING:
    from ._crossfit import LiftScores

__all__ = ["LiftEstimator", "risk_of"]

FloatArray = NDArray[np.float64]


def risk_of(log_lift: FloatArray) -> FloatArray:
    """Per-record risk ``max_s |i(s, x)|`` of a log-lift matrix; inf where it is unknown (NaN)."""
    risk = np.abs(log_lift).max(axis=1)
    return np.asarray(np.where(np.isnan(risk), np.inf, risk), dtype=np.float64)


class LiftEstimator(BaseEstimator):  # type: ignore[misc]
    """Base class: ``fit(X, s)``, ``log_lift(X)`` (n x |S|, columns in sorted order of the
    sensitive values), ``score_samples(X)`` (max_s |i(s, x)|), ``mutual_information(X, s)``,
    ``fit_score(X, s, cv=5)`` (cross-fitted log-lift with intervals) and
    ``log_lift_interval(X)``. A scikit-learn estimator: ``sklearn.base.clone`` works."""

    def _fit_sensitive(self, s: ArrayLike, n: int) -> NDArray[np.int64]:
        arr = np.asarray(s)
        if arr.ndim != 1 or len(arr) != n:
            raise ValidationError(
                f"`s` must be one sensitive label per record ({n}); got shape {arr.shape}."
            )
        codes, labels = encode_sensitive(pd.Series(arr), "s", "s")
        self.sensitive_labels_: list[Any] = labels
        self.prior_ = np.bincount(codes, minlength=len(labels)) / len(codes)
        return codes

    def _sensitive_codes(self, s: ArrayLike) -> NDArray[np.int64]:
        labels = pd.Index(self.sensitive_labels_)
        codes = labels.get_indexer(pd.Index(np.asarray(s)))
        if (codes < 0).any():
            raise ValidationError(
                f"`s` must take values seen at fit time {self.sensitive_labels_}; got others."
            )
        return np.asarray(codes, dtype=np.int64)

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> LiftEstimator:
        raise NotImplementedError

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        raise NotImplementedError

    def score_samples(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Per-record risk ``max_s |i(s, x)|`` (inf where the log-lift is unknown)."""
        return risk_of(self.log_lift(X))

    def mutual_information(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> float:
        """Estimate of I(S;X): the mean estimated log-lift of the given (x_i, s_i) pairs."""
        check_is_fitted(self, "prior_")
        ll = self.log_lift(X)
        codes = self._sensitive_codes(s)
        values = ll[np.arange(len(codes)), codes]
        return float(np.nanmean(values))

    # ------------------------------------------------------------------ cross-fitting, intervals
    def frozen_estimator(self) -> LiftEstimator:
        """An unfitted copy that refits the selected family with its selected regularisation
        (used by the folds of :meth:`fit_score` and by its bootstrap)."""
        from sklearn.base import clone

        est: LiftEstimator = clone(self)
        frozen = getattr(self, "frozen_params", None)
        if frozen is not None:
            est.set_params(**frozen())
        return est

    def fit_score(
        self,
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
        """Fit on all records and return **cross-fitted** per-record log-lifts with intervals.

        Record i's log-lift is the mean, over ``n_repeats`` splits into ``cv`` folds (stratified
        on ``s``, drawn from ``rng``), of the model of the fold that did not see it; its
        ``level`` interval is :math:`\\hat i \\pm q\\,\\mathrm{sd}\\sqrt{1 + 1/(R(cv-1))}`
        (R = ``n_repeats``) with the standard deviation
        from the grouped jackknife over the fold models (``interval="jackknife"``, free; q a
        Student-t quantile on cv - 1 df) or from ``n_bootstrap`` refits on resamples
        (``interval="bootstrap"``; q normal), plus, for a stack of families
        (:class:`AutoLift`'s default), their between-family variance inside the square root
        (see :mod:`privwatch.estimators._crossfit`); ``interval=None``: no interval. After the
        call the estimator is fitted on all records (for new records) and
        :meth:`log_lift_interval` works (the same standard deviation without the fold factor).
        """
        from ._crossfit import cross_fit

        return cross_fit(
            self,
            X,
            s,
            cv=cv,
            n_repeats=n_repeats,
            level=level,
            interval=interval,
            n_bootstrap=n_bootstrap,
            max_bootstrap_rows=max_bootstrap_rows,
            progress=progress,
        )

    def log_lift_interval(
        self, X: pd.DataFrame | ArrayLike, level: float = 0.9
    ) -> tuple[FloatArray, FloatArray]:
        """Interval ``(lower, upper)`` of the log-lift of new records (after :meth:`fit_score`
        with an ``interval``): the resampling standard deviation and, for a stack of families,
        their between-family variance (:meth:`AutoLift.model_variance`) added in quadrature."""
        from ._crossfit import critical_value, model_variance, spread

        check_open_fraction(level, "level")
        sd = np.sqrt(spread(self, X) ** 2 + model_variance(self, X))
        ll = self.log_lift(X)
        z = critical_value(self, level)
        return ll - z * sd, ll + z * sd
