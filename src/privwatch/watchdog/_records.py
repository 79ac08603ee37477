"""The per-record watchdog with a learned log-lift estimator (Hsu et al. §IV).

X_eps is the set of records whose estimated |log-lift| is at most epsilon for every sensitive
value; flagged records are randomized X^c-invariantly: merged into one marker value, or replaced
by the observed values of a record drawn uniformly from the flagged training records.

The fit records are scored **cross-fitted** (``cv`` folds, issue #16): each one by a model that
did not see it, so an overfitted model cannot under- or over-state the very risks it reports;
new records are scored by the model fitted on all fit records.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._rng import check_rng
from ..estimators import LiftEstimator
from ..estimators._base import risk_of
from ..exceptions import PrivacyWarning, ValidationError
from ._results import Guarantee, RecordScores
from ._table import safe_marker

__all__ = ["RecordWatchdog"]


def _fingerprint(frame: pd.DataFrame) -> np.ndarray:
    """Row hashes in order: equal arrays mean the same records in the same order."""
    return np.asarray(pd.util.hash_pandas_object(frame, index=False).to_numpy())


class RecordWatchdog:
    """Fitted state of the record-level watchdog (used by :class:`~privwatch.Watchdog`)."""

    def __init__(self, estimator: LiftEstimator, columns: list[str], cv: int | None = 5) -> None:
        if not isinstance(estimator, LiftEstimator):
            raise ValidationError(
                "`estimator` must be a privwatch log-lift estimator (PluginLift, ClassifierLift, "
                f"DVLift); got {type(estimator).__name__}."
            )
        from sklearn.base import clone

        self.estimator = clone(estimator)
        self.columns = columns
        self.cv = cv

    def fit(self, frame: pd.DataFrame, s_codes: np.ndarray, s_labels: list[Any]) -> RecordWatchdog:
        observed = frame[self.columns]
        labels = np.asarray(s_labels, dtype=object)[s_codes]
        if self.cv is None:
            self.estimator.fit(observed, labels)
            ll = self.estimator.log_lift(observed)
            self.fold_ = np.full(len(observed), -1, dtype=np.int64)
        else:
            scores = self.estimator.fit_score(observed, labels, cv=self.cv, interval=None)
            ll, self.fold_ = scores.log_lift, scores.fold
        self.fit_log_lift_ = ll
        self._fit_risk = risk_of(ll)
        self._observed = observed
        self._s_codes = s_codes
        self._n_labels = len(s_labels)
        self._fingerprint = _fingerprint(observed)
        return self

    def threshold(self, epsilon: float) -> RecordWatchdog:
        """Flag the fit records whose estimated |log-lift| exceeds ``epsilon``; the guarantee."""
        self.epsilon = epsilon
        keep = self._fit_risk <= epsilon
        s_codes = self._s_codes
        self.pool_ = self._observed.loc[~keep].reset_index(drop=True)
        prior = np.bincount(s_codes, minlength=self._n_labels) / len(s_codes)
        if (~keep).any():
            flagged = np.bincount(s_codes[~keep], minlength=self._n_labels) / (~keep).sum()
            with np.errstate(divide="ignore"):
                randomized = float(np.abs(np.log(flagged / prior)).max())
        else:
            randomized = 0.0
        kept = float(self._fit_risk[keep].max()) if keep.any() else 0.0
        self.guarantee_ = Guarantee(
            epsilon=max(kept, randomized),
            delta=0.0,
            threshold=epsilon,
            randomized_epsilon=randomized,
            flagged_probability=float((~keep).mean()),
            n_flagged_symbols=int((~keep).sum()),
            basis=f"estimated by {type(self.estimator).__name__} on the fit records"
            + (f", cross-fitted ({self.cv} folds)" if self.cv is not None else ""),
        )
        return self

    def _is_fit_records(self, observed: pd.DataFrame) -> bool:
        return len(observed) == len(self._fingerprint) and bool(
            np.array_equal(_fingerprint(observed), self._fingerprint)
        )

    def scores(self, frame: pd.DataFrame, labels: list[Any]) -> RecordScores:
        """Per-record log-lift: cross-fitted when ``frame`` holds the fit records (in order)."""
        observed = frame[self.columns]
        if self.cv is not None and self._is_fit_records(observed):
            ll = self.fit_log_lift_
        else:
            ll = self.estimator.log_lift(observed)
        known = np.asarray(~np.isnan(ll).any(axis=1), dtype=bool)
        risk = risk_of(ll)
        return RecordScores(risk, ll, known, labels)

    def transform(
        self, frame: pd.DataFrame, flagged: np.ndarray, randomization: str, marker: str, rng: Any
    ) -> pd.DataFrame:
        observed = frame[self.columns]
        if self.cv is None and self._is_fit_records(observed):
            warnings.warn(
                "the log-lift was estimated on the very records being released, without a "
                "held-out split: their flags and the guarantee are optimistic. Fit on other "
                "records of the same population.",
                PrivacyWarning,
                stacklevel=3,
            )
        out = observed.copy()
        if not flagged.any():
            return out
        if randomization == "merge":
            out = out.astype(object)
            for col in out.columns:  # a marker no value of the column equals
                out.loc[flagged, col] = safe_marker(marker, observed[col].unique())
            return out
        if len(self.pool_) == 0:
            raise ValidationError("no flagged fit records to draw from; use randomization='merge'.")
        drawn = check_rng(rng).integers(0, len(self.pool_), size=int(flagged.sum()))
        out = out.astype(object)
        out.loc[flagged, :] = self.pool_.iloc[drawn].to_numpy(dtype=object)
        return out


def is_record_level(estimator: Any) -> bool:
    """True for estimators that need the per-record watchdog (everything but plug-in counts)."""
    from ..estimators import PluginLift

    return estimator is not None and not isinstance(estimator, PluginLift)
