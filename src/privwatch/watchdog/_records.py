"""The per-record watchdog with a learned log-lift estimator (Hsu et al. §IV).

X_eps is the set of records whose estimated |log-lift| is at most epsilon for every sensitive
value; flagged records are randomized X^c-invariantly: merged into one marker value, or replaced
by the observed values of a record drawn uniformly from the flagged training records.
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

__all__ = ["RecordWatchdog"]


def _fingerprint(frame: pd.DataFrame) -> tuple[int, int]:
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return len(frame), int(np.bitwise_xor.reduce(hashes)) if len(hashes) else 0


class RecordWatchdog:
    """Fitted state of the record-level watchdog (used by :class:`~privwatch.Watchdog`)."""

    def __init__(self, estimator: LiftEstimator, columns: list[str]) -> None:
        if not isinstance(estimator, LiftEstimator):
            raise ValidationError(
                "`estimator` must be a privwatch log-lift estimator (PluginLift, ClassifierLift, "
                f"DVLift); got {type(estimator).__name__}."
            )
        self.estimator = type(estimator)(**estimator.get_params())
        self.columns = columns

    def fit(self, frame: pd.DataFrame, s_codes: np.ndarray, s_labels: list[Any]) -> RecordWatchdog:
        observed = frame[self.columns]
        self.estimator.fit(observed, np.asarray(s_labels, dtype=object)[s_codes])
        ll = self.estimator.log_lift(observed)
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
            basis=f"estimated by {type(self.estimator).__name__} on the fit records",
        )
        return self

    def scores(self, frame: pd.DataFrame, labels: list[Any]) -> RecordScores:
        ll = self.estimator.log_lift(frame[self.columns])
        known = np.asarray(~np.isnan(ll).any(axis=1), dtype=bool)
        risk = risk_of(ll)
        return RecordScores(risk, ll, known, labels)

    def transform(
        self, frame: pd.DataFrame, flagged: np.ndarray, randomization: str, marker: str, rng: Any
    ) -> pd.DataFrame:
        observed = frame[self.columns]
        if _fingerprint(observed) == self._fingerprint:
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
            out.loc[flagged, :] = marker
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
