"""What every log-lift estimator is: ``fit(X, s)``, ``log_lift(X)`` and what follows from them.

:class:`LiftModel` is the part of the estimator interface that cross-fitting
(:mod:`privwatch.estimators._crossfit`) works with; :class:`~privwatch.estimators.LiftEstimator`
adds the cross-fitted scores and intervals on top of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, clone

from .._base import check_is_fitted
from ..exceptions import ValidationError
from ..joint import encode_sensitive

__all__ = ["FloatArray", "LiftModel", "normalize_log_lift", "risk_of"]

FloatArray = NDArray[np.float64]


def risk_of(log_lift: FloatArray) -> FloatArray:
    """Per-record risk ``max_s |i(s, x)|`` of a log-lift matrix; inf where it is unknown (NaN)."""
    risk = np.abs(log_lift).max(axis=1)
    return np.asarray(np.where(np.isnan(risk), np.inf, risk), dtype=np.float64)


def normalize_log_lift(ll: FloatArray, prior: FloatArray) -> FloatArray:
    """Shift each row so that ``sum_s prior(s) exp(ll(s, x)) = 1``, as for every log-lift."""
    norm = logsumexp(ll + np.log(prior)[None, :], axis=1)
    return np.asarray(ll - norm[:, None], dtype=np.float64)


class LiftModel(BaseEstimator):  # type: ignore[misc]
    """A log-lift model of a sensitive attribute: ``fit(X, s)``, ``log_lift(X)`` (n x |S|,
    columns in sorted order of the sensitive values), ``score_samples(X)`` (max_s |i(s, x)|),
    ``mutual_information(X, s)`` and ``frozen_estimator()``. A scikit-learn estimator:
    ``sklearn.base.clone`` works."""

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

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> LiftModel:
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

    def frozen_estimator(self) -> LiftModel:
        """An unfitted copy that refits the selected family with its selected regularisation
        (used by the folds of cross-fitting and by its bootstrap)."""
        est: LiftModel = clone(self)
        frozen = getattr(self, "frozen_params", None)
        if frozen is not None:
            est.set_params(**frozen())
        return est
