"""The record-level strategy of the watchdog: a learned log-lift estimator (Hsu et al. §IV).

The unit is a fit record: a record is released when its estimated ``max_s |i(s, x)|`` is at most
epsilon; flagged records are randomized X^c-invariantly: merged into one marker value, or
replaced by the observed values of a record drawn uniformly from the flagged fit records.

The fit records are scored **cross-fitted** (``cv`` folds, issue #16): each one by a model that
did not see it, so an overfitted model cannot under- or over-state the very risks it reports;
new records are scored by the model fitted on all fit records.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._rng import check_rng
from .._validation import check_nonnegative
from ..exceptions import PrivacyWarning, ValidationError
from ._mechanism import WatchdogUtility, _utility
from ._results import Guarantee, RecordScores
from ._table import safe_marker

if TYPE_CHECKING:  # at run time imported where used: the estimators load scikit-learn
    from ..estimators import LiftEstimator

__all__ = [
    "RecordStrategy",
    "flagged_set_guarantee",
    "is_record_level",
    "record_guarantee",
    "risk_of",
]

FloatArray = NDArray[np.float64]


def risk_of(log_lift: FloatArray) -> FloatArray:
    """Per-record risk ``max_s |i(s, x)|``; inf where the log-lift is unknown (NaN)."""
    risk = np.abs(log_lift).max(axis=1)
    return np.asarray(np.where(np.isnan(risk), np.inf, risk), dtype=np.float64)


def record_guarantee(
    risk: FloatArray, s_codes: NDArray[np.int64], n_sensitive: int, epsilon: float, basis: str
) -> tuple[NDArray[np.bool_], Guarantee, WatchdogUtility]:
    r"""Released records, guarantee and utility when every record is its own symbol (mass 1/n).

    A record is kept when ``risk <= epsilon``; the guarantee is :func:`flagged_set_guarantee`
    of the counts. Utility: Hsu et al. eq. (11) with :math:`P_X(x_i) = 1/n`.
    """
    keep = risk <= epsilon
    n = len(risk)
    guarantee = flagged_set_guarantee(
        np.bincount(s_codes, minlength=n_sensitive),
        np.bincount(s_codes[~keep], minlength=n_sensitive),
        float(risk[keep].max()) if keep.any() else 0.0,
        epsilon,
        basis,
    )
    return keep, guarantee, _utility(np.full(n, 1.0 / n), keep)


def _count_vector(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """A 1-D array of finite non-negative whole numbers (records per sensitive value)."""
    raw = np.asarray(x)
    if raw.dtype.kind not in "biuf" or raw.ndim != 1 or raw.size == 0:
        raise ValidationError(
            f"`{name}` must be a non-empty 1-D array of counts per sensitive value; got dtype "
            f"{raw.dtype}, shape {raw.shape}."
        )
    arr = raw.astype(np.float64)
    if not np.isfinite(arr).all() or (arr < 0).any() or (arr != np.round(arr)).any():
        raise ValidationError(
            f"`{name}` must hold finite non-negative whole numbers; got {arr.tolist()[:8]}."
        )
    if float(arr.max()) > 2.0**53 / arr.size:  # the total must stay an exact whole number
        raise ValidationError(
            f"`{name}` must total at most 2**53 records; got a largest entry of "
            f"{float(arr.max()):.3g} in {arr.size} values."
        )
    return arr


def flagged_set_guarantee(
    sensitive_counts: ArrayLike,
    flagged_counts: ArrayLike,
    kept_risk: float,
    epsilon: float,
    basis: str,
) -> Guarantee:
    r"""The record-level watchdog's guarantee from counts: records per sensitive value, flagged
    records per sensitive value, and the largest (estimated) risk of a kept record.

    The flagged records are merged into one released value; its level is
    :math:`\max_s |\log P(s \mid \text{flagged}) / P(s)|` on the empirical distribution of the
    labels; the kept level is ``kept_risk`` (kept records meet epsilon by construction); the
    breach probability is :math:`\sum_s P(s, \text{flagged})\,
    \mathbb 1\{|i(s, \text{flagged})| > \varepsilon\}` (Sadeghi et al. eq. 11 with the
    flagged set as the one randomized symbol).

    Examples
    --------
    >>> g = flagged_set_guarantee([50, 50], [10, 2], 0.3, 0.5, "an example")
    >>> round(g.randomized_epsilon, 4), g.breach_probability, g.flagged_probability
    (1.0986, 0.12, 0.12)
    """
    counts = _count_vector(sensitive_counts, "sensitive_counts")
    flagged = _count_vector(flagged_counts, "flagged_counts")
    if flagged.shape != counts.shape or (flagged > counts).any():
        raise ValidationError(
            "`flagged_counts` must count, per sensitive value, at most the records of "
            f"`sensitive_counts`; got {flagged.tolist()} and {counts.tolist()}."
        )
    n = counts.sum()
    if n <= 0:
        raise ValidationError("`sensitive_counts` must count at least one record.")
    epsilon = check_nonnegative(epsilon, "epsilon", allow_inf=True)
    kept_risk = check_nonnegative(kept_risk, "kept_risk", allow_inf=True)
    if kept_risk > epsilon + 1e-12:
        raise ValidationError(
            f"`kept_risk` must be at most `epsilon` (kept records meet it); got {kept_risk!r} > "
            f"{epsilon!r}."
        )
    if not isinstance(basis, str):
        raise ValidationError(f"`basis` must be text; got {type(basis).__name__}.")
    randomized, breach = 0.0, 0.0
    if flagged.sum() > 0:
        joint_flagged = flagged / n
        with np.errstate(divide="ignore", invalid="ignore"):
            level = np.abs(np.log(joint_flagged / (flagged.sum() / n) / (counts / n)))
        level = np.where(counts > 0, level, 0.0)
        randomized = float(level.max())
        breach = float(joint_flagged[level > epsilon + 1e-12].sum())
    return Guarantee(
        effective_epsilon=max(float(kept_risk), randomized),
        breach_probability=breach,
        threshold=epsilon,
        randomized_epsilon=randomized,
        flagged_probability=float(flagged.sum() / n),
        n_flagged_symbols=int(flagged.sum()),
        basis=basis,
    )


def _fingerprint(frame: pd.DataFrame) -> NDArray[np.uint64]:
    """Row hashes in order: equal arrays mean the same records in the same order."""
    return np.asarray(pd.util.hash_pandas_object(frame, index=False).to_numpy())


def is_record_level(estimator: Any) -> bool:
    """True for estimators that need the record-level strategy (everything but plug-in counts)."""
    if estimator is None:
        return False
    from ..estimators import PluginLift

    return not isinstance(estimator, PluginLift)


#: From this many records on, the record-level watchdog cross-fits one split instead of three
#: (issue #41 item 7: 6 models instead of 16). Three splits make a record's cross-fitted score
#: 1.04x the full model's RMSE instead of 1.12x (``estimators/_crossfit.py``); at this size the
#: fold models' own spread is small, and 100,000 x 10 records took 391 s with three.
ONE_SPLIT_RECORDS = 50_000


class RecordStrategy:
    """Record-level watchdog with a clone of ``estimator``; the unit is a fit record."""

    def __init__(self, estimator: LiftEstimator, columns: list[str], cv: int | None = 5) -> None:
        from sklearn.base import clone

        from ..estimators import LiftEstimator

        if not isinstance(estimator, LiftEstimator):
            raise ValidationError(
                "`estimator` must be a privwatch log-lift estimator (PluginLift, ClassifierLift, "
                f"DVLift, PosteriorLift, AutoLift); got {type(estimator).__name__}."
            )
        self.estimator = clone(estimator)
        self.columns = columns
        self.cv = cv

    def fit(
        self, frame: pd.DataFrame, s_codes: NDArray[np.int64], s_labels: list[Any], name: str = "s"
    ) -> RecordStrategy:
        observed = frame[self.columns]
        labels = np.asarray(s_labels, dtype=object)[s_codes]
        if self.cv is None:
            self.estimator.fit(observed, labels)
            self.log_lift = self.estimator.log_lift(observed)
            self.fold = np.full(len(observed), -1, dtype=np.int64)
            self.spread = np.full_like(self.log_lift, np.nan)
        else:
            # the fold models' spread (grouped jackknife) is kept for the held-out estimate; one
            # split from ONE_SPLIT_RECORDS records on (see ONE_SPLIT_RECORDS) and for the
            # families whose fits cost (the networks: LiftEstimator.cross_fit_splits)
            repeats = 1 if len(observed) >= ONE_SPLIT_RECORDS else self.estimator.cross_fit_splits
            scores = self.estimator.fit_score(
                observed, labels, cv=self.cv, n_repeats=repeats, interval="jackknife"
            )
            self.log_lift, self.fold = scores.log_lift, scores.fold
            self.spread = np.full_like(self.log_lift, np.nan) if scores.sd is None else scores.sd
        self.sensitive_labels = s_labels
        self._risk = risk_of(self.log_lift)
        self._observed = observed
        self._s_codes = s_codes
        self._fingerprint = _fingerprint(observed)
        return self

    def threshold(self, epsilon: float, delta: float | None, epsilon_max: float) -> None:
        # delta is refused by Watchdog before fitting (the relaxation needs symbols)
        self.epsilon = epsilon
        basis = f"estimated by {type(self.estimator).__name__} on the fit records" + (
            f", cross-fitted ({self.cv} folds)" if self.cv is not None else ""
        )
        n_s = len(self.sensitive_labels)
        self.keep, self.guarantee, self.utility = record_guarantee(
            self._risk, self._s_codes, n_s, epsilon, basis
        )
        self.pool = self._observed.loc[~self.keep].reset_index(drop=True)

    def unit_index(self) -> pd.Index:
        return self._observed.index

    def _is_fit_records(self, observed: pd.DataFrame) -> bool:
        return len(observed) == len(self._fingerprint) and bool(
            np.array_equal(_fingerprint(observed), self._fingerprint)
        )

    def scores(self, frame: pd.DataFrame) -> RecordScores:
        """Cross-fitted log-lift when ``frame`` holds the fit records (in order)."""
        observed = frame[self.columns]
        if self.cv is not None and self._is_fit_records(observed):
            ll = self.log_lift
        else:
            ll = self.estimator.log_lift(observed)
        known = np.asarray(~np.isnan(ll).any(axis=1), dtype=bool)
        return RecordScores(risk_of(ll), ll, known, list(self.sensitive_labels))

    def flag(self, frame: pd.DataFrame) -> NDArray[np.bool_]:
        return np.asarray(self.scores(frame).risk > self.epsilon, dtype=bool)

    def release(
        self, frame: pd.DataFrame, randomization: str, marker: str, rng: Any
    ) -> pd.DataFrame:
        observed = frame[self.columns]
        flagged = self.flag(frame)
        if self.cv is None and self._is_fit_records(observed):
            warnings.warn(
                "the log-lift was estimated on the very records being released, without a "
                "held-out split: their flags and the guarantee are optimistic. Fit on other "
                "records of the same population.",
                PrivacyWarning,
                stacklevel=4,
            )
        out = observed.copy()
        if not flagged.any():
            return out
        if randomization == "merge":
            out = out.astype(object)
            for col in out.columns:  # a marker no value of the column equals
                out.loc[flagged, col] = safe_marker(marker, observed[col].unique())
            return out
        if len(self.pool) == 0:
            raise ValidationError(
                "`randomization` must be 'merge' when no fit record is flagged (nothing to "
                "draw from); got 'uniform'."
            )
        drawn = check_rng(rng).integers(0, len(self.pool), size=int(flagged.sum()))
        out = out.astype(object)
        out.loc[flagged, :] = self.pool.iloc[drawn].to_numpy(dtype=object)
        return out
