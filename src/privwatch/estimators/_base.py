"""The interface shared by every log-lift estimator: :class:`LiftModel` with cross-fitted
scores and intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._validation import check_open_fraction
from ._crossfit import LiftScores, critical_value, cross_fit, model_variance, spread
from ._lift import FloatArray, LiftModel

__all__ = ["LiftEstimator"]


class LiftEstimator(LiftModel):
    """Base class: ``fit(X, s)``, ``log_lift(X)`` (n x |S|, columns in sorted order of the
    sensitive values), ``score_samples(X)`` (max_s |i(s, x)|), ``mutual_information(X, s)``,
    ``fit_score(X, s, cv=5)`` (cross-fitted log-lift with intervals) and
    ``log_lift_interval(X)``. A scikit-learn estimator: ``sklearn.base.clone`` works."""

    #: How many cv splits the record-level watchdog cross-fits with this family (``n_repeats``
    #: of :meth:`fit_score`): three for the cheap families (a record's score 1.04x the full
    #: model's RMSE instead of 1.12x), one for the networks (:class:`NeuralLift`), whose fits
    #: are the audit's cost (issue #41 item 7).
    cross_fit_splits: int = 3

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
        check_open_fraction(level, "level")
        sd = np.sqrt(spread(self, X) ** 2 + model_variance(self, X))
        ll = self.log_lift(X)
        z = critical_value(self, level)
        return ll - z * sd, ll + z * sd
