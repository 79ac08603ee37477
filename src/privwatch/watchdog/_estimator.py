"""The :class:`Watchdog` estimator: score, flag and release the records of a table."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from .._base import check_is_fitted
from .._encoder import joint_counts
from .._rng import RNGLike, check_rng
from .._validation import check_nonnegative, check_probability
from ..estimators import LiftEstimator, PluginLift
from ..exceptions import PrivacyWarning, ValidationError
from ..joint import Joint, _warn_sparse, encode_sensitive, plugin_estimate
from ..measures import LeakageReport, leakage_report, log_lift
from ..preprocessing import DEFAULT_MAX_LEVELS
from ._bounds import _gamma
from ._mechanism import WatchdogUtility, _effective_level, _utility
from ._partition import _symbol_risk
from ._records import RecordWatchdog, is_record_level
from ._relaxed import _breach, relaxed_watchdog
from ._results import Guarantee, RecordScores, WatchdogEvaluation
from ._table import as_frame_and_sensitive, flags_of, observed_frame, release_joint, safe_marker

__all__ = ["Guarantee", "RecordScores", "Watchdog", "WatchdogEvaluation"]

FloatArray = NDArray[np.float64]


class Watchdog(BaseEstimator):  # type: ignore[misc]
    """Privacy watchdog on a table (Hsu, Asoodeh, Calmon §III; Sadeghi, Ding, Rakotoarivelo).

    Estimates the log-lift of every observed tuple by plug-in counts, flags the tuples whose
    absolute log-lift exceeds ``epsilon`` for some sensitive value, and releases the table with the
    flagged records randomized X^c-invariantly (the optimal randomization, Sadeghi Cor. 1).

    Parameters
    ----------
    epsilon : float
        Threshold on |log-lift| (nats).
    delta : float or None
        None: strict watchdog. A probability: the (epsilon, delta) relaxation (Sadeghi Alg. 1).
    epsilon_max : float
        With ``delta``: the hard cap on the effective |log-lift|.
    randomization : {"merge", "uniform"}
        ``merge``: flagged records get one marker value in every observed column; ``uniform``:
        flagged records get a tuple drawn uniformly from the flagged tuples.
    smoothing : float
        Additive smoothing of the counts.
    max_levels : int or None
        Numeric observed columns with more distinct values must be binned first
        (:func:`privwatch.bin_columns`).
    marker : str
        The marker value of merged records.
    rng : int, Generator or None
        Randomness of ``uniform`` releases.
    estimator : LiftEstimator or None
        None (or a :class:`~privwatch.estimators.PluginLift`, whose smoothing is then used): the
        exact plug-in watchdog over observed tuples. A neural estimator
        (:class:`~privwatch.estimators.ClassifierLift`, :class:`~privwatch.estimators.DVLift`):
        the per-record watchdog of Hsu et al. §IV — a record is flagged when its estimated
        |log-lift| exceeds epsilon; the guarantee is then an estimate. ``uniform`` draws the
        observed values of a random flagged fit record. ``delta`` needs the plug-in path.

    Examples
    --------
    >>> df = pd.DataFrame({"s": [0] * 40 + [1] * 40,
    ...                    "x": ["a"] * 30 + ["b"] * 10 + ["a"] * 10 + ["b"] * 30})
    >>> wd = Watchdog(epsilon=0.3).fit(df, sensitive="s", observed=["x"])
    >>> wd.flag(df).mean()
    np.float64(1.0)
    >>> wd.transform(df)["x"].unique().tolist()
    ['*']
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        delta: float | None = None,
        epsilon_max: float = math.inf,
        randomization: str = "merge",
        smoothing: float = 0.0,
        max_levels: int | None = DEFAULT_MAX_LEVELS,
        marker: str = "*",
        rng: RNGLike = None,
        estimator: LiftEstimator | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.epsilon_max = epsilon_max
        self.randomization = randomization
        self.smoothing = smoothing
        self.max_levels = max_levels
        self.marker = marker
        self.rng = rng
        self.estimator = estimator

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> tuple[float, float | None, float]:
        eps = check_nonnegative(self.epsilon, "epsilon", allow_inf=True)
        delta = None if self.delta is None else check_probability(self.delta, "delta")
        eps_max = check_nonnegative(self.epsilon_max, "epsilon_max", allow_inf=True)
        if self.randomization not in ("merge", "uniform"):
            raise ValidationError(
                f"`randomization` must be 'merge' or 'uniform'; got {self.randomization!r}."
            )
        check_nonnegative(self.smoothing, "smoothing")
        if delta is not None and is_record_level(self.estimator):
            raise ValidationError(
                "`delta` (the (epsilon, delta) relaxation) needs the plug-in watchdog; got "
                f"estimator={type(self.estimator).__name__}."
            )
        return eps, delta, eps_max

    def fit(
        self,
        X: pd.DataFrame | ArrayLike,
        sensitive: str | ArrayLike,
        observed: Sequence[str] | None = None,
    ) -> Watchdog:
        """Estimate the lift of every observed tuple and choose the released set.

        ``X``: a DataFrame (``sensitive`` a column name, ``observed`` the columns, default all
        others) or a 2-D array (``sensitive`` an array of labels, columns named ``x0, x1, ...``).
        """
        eps, delta, eps_max = self._check_params()
        frame, s_values, cols = as_frame_and_sensitive(X, sensitive, observed)
        s_codes, s_labels = encode_sensitive(s_values, str(s_values.name))
        self.observed_ = cols
        self.sensitive_ = str(s_values.name)
        self.sensitive_labels_ = s_labels
        if is_record_level(self.estimator):
            assert self.estimator is not None
            self.records_: RecordWatchdog | None = RecordWatchdog(self.estimator, cols).fit(
                frame, s_codes, s_labels
            )
            self.records_.threshold(eps)
            self.estimator_ = self.records_.estimator
            self.guarantee_ = self.records_.guarantee_
            self.keep_ = np.zeros(0, dtype=bool)
            return self
        self.records_ = None
        a = self.estimator.smoothing if isinstance(self.estimator, PluginLift) else self.smoothing
        self.encoder_, counts, p = plugin_estimate(
            frame, cols, s_codes, len(s_labels), smoothing=a, max_levels=self.max_levels
        )
        _warn_sparse(counts)
        self.counts_ = counts
        self.joint_ = Joint(
            p,
            s_labels,
            None,
            sensitive_name=self.sensitive_,
            observed_name=",".join(cols),
            counts=counts,
        )
        # (n_observed, n_sensitive), C-ordered so that records gather whole rows
        self.log_lift_ = np.ascontiguousarray(log_lift(p).T)
        self.risk_ = _symbol_risk(p)
        self._choose_released(eps, delta, eps_max)
        return self

    def _choose_released(self, eps: float, delta: float | None, eps_max: float) -> None:
        """Plug-in path: the released symbols, the guarantee, the utility and the leakage."""
        p = self.joint_.p
        if delta is None:
            keep = self.risk_ <= eps
            breach = 0.0
        else:
            relaxed = relaxed_watchdog(p, eps, delta, eps_max)
            keep, breach = relaxed.mask, relaxed.breach_probability
        # the guarantee is about the records released: with smoothing, the flags come from the
        # smoothed estimate but the level is computed on the unsmoothed (empirical) counts
        emp = np.asarray(self.counts_, dtype=float)
        emp = emp / emp.sum() if emp.shape == p.shape and emp.sum() > 0 else p
        randomized, effective = _effective_level(emp, keep, _symbol_risk(emp))
        self.keep_ = keep
        self.guarantee_ = Guarantee(
            epsilon=effective,
            delta=breach if emp is p else _breach(emp, keep, eps),
            threshold=eps,
            randomized_epsilon=randomized,
            flagged_probability=float(emp[:, ~keep].sum()),
            n_flagged_symbols=int(np.count_nonzero(~keep)),
        )
        self.utility_: WatchdogUtility = _utility(p.sum(axis=0), keep)

    def rethreshold(self, epsilon: float) -> Watchdog:
        """Change ``epsilon`` of a fitted watchdog without re-estimating the log-lift.

        The released set, the guarantee, the utility and the leakage are recomputed; with a
        neural estimator no network is retrained. Returns ``self``.
        """
        check_is_fitted(self, "guarantee_")
        self.epsilon = epsilon
        eps, delta, eps_max = self._check_params()
        if self.records_ is not None:
            self.records_.threshold(eps)
            self.guarantee_ = self.records_.guarantee_
        else:
            self._choose_released(eps, delta, eps_max)
        return self

    def _plugin_pmf(self) -> NDArray[np.float64]:
        check_is_fitted(self, "guarantee_")
        if self.records_ is not None:
            raise ValidationError(
                "exact leakage measures need the plug-in watchdog; with a neural estimator use "
                "estimator_.mutual_information(X, s) for an estimate."
            )
        return self.joint_.p

    @property
    def leakage_before_(self) -> LeakageReport:
        """Every leakage measure of S through the observed tuples (exact, fitted pmf)."""
        return leakage_report(self._plugin_pmf())

    @property
    def leakage_after_(self) -> LeakageReport:
        """Every leakage measure of S through the release (exact, fitted pmf, merged release)."""
        return leakage_report(release_joint(self._plugin_pmf(), self.keep_))

    @property
    def lift_(self) -> pd.DataFrame:
        """Log-lift per observed tuple (rows) and sensitive value (columns)."""
        check_is_fitted(self, "log_lift_")
        index = pd.MultiIndex.from_tuples(self.encoder_.labels(), names=self.observed_)
        return pd.DataFrame(self.log_lift_, index=index, columns=self.sensitive_labels_)

    # ------------------------------------------------------------------ score, flag, release
    def _symbols(
        self, X: pd.DataFrame | ArrayLike
    ) -> tuple[pd.DataFrame, NDArray[np.integer], list[NDArray[np.integer]]]:
        """(frame, symbol of each record, per-column codes); warns about unseen tuples."""
        check_is_fitted(self, "keep_")
        frame = observed_frame(X, self.observed_)
        key, per_column = self.encoder_.column_codes(frame)
        symbols = self.encoder_.symbols_of(key)
        n_unseen = int(np.count_nonzero(symbols < 0))
        if n_unseen:
            warnings.warn(
                f"{n_unseen} records have observed values never seen at fit time; they are "
                "flagged (risk inf) and randomized, never released as they are.",
                PrivacyWarning,
                stacklevel=3,
            )
        return frame, symbols, per_column

    def score_samples(self, X: pd.DataFrame | ArrayLike) -> RecordScores:
        """Per-record risk max_s |i(s, x)| and the full log-lift vector."""
        check_is_fitted(self, "guarantee_")
        if self.records_ is not None:
            frame = observed_frame(X, self.observed_)
            return self.records_.scores(frame, list(self.sensitive_labels_))
        _, symbols, _ = self._symbols(X)
        known = symbols >= 0
        if known.all():
            log_lift = np.take(self.log_lift_, symbols, axis=0)
            risk = np.take(self.risk_, symbols)
            return RecordScores(risk, log_lift, known, list(self.sensitive_labels_))
        safe = np.where(known, symbols, 0)
        log_lift = np.take(self.log_lift_, safe, axis=0)
        log_lift[~known] = np.nan
        risk = np.where(known, self.risk_[safe], np.inf)
        return RecordScores(risk, log_lift, known, list(self.sensitive_labels_))

    def flag(self, X: pd.DataFrame | ArrayLike) -> NDArray[np.bool_]:
        """True for records to randomize: flagged tuples and tuples unseen at fit time."""
        check_is_fitted(self, "guarantee_")
        if self.records_ is not None:
            return np.asarray(self.score_samples(X).risk > self.records_.epsilon, dtype=bool)
        _, symbols, _ = self._symbols(X)
        return flags_of(self.keep_, symbols)

    def transform(self, X: pd.DataFrame | ArrayLike) -> pd.DataFrame:
        """The release: the observed columns, flagged records randomized.

        The sensitive column is never part of the release. Columns come back as categoricals
        (with the marker as an extra category under ``merge``). With a neural estimator the
        columns keep their values, as objects when a marker or a drawn record was written in.
        """
        check_is_fitted(self, "guarantee_")
        if self.records_ is not None:
            frame = observed_frame(X, self.observed_)
            flagged = self.flag(frame)
            return self.records_.transform(
                frame, flagged, self.randomization, self.marker, self.rng
            )
        frame, symbols, per_column = self._symbols(X)
        flagged = flags_of(self.keep_, symbols)
        out = {}
        if self.randomization == "uniform" and flagged.any():
            pool = np.flatnonzero(~self.keep_)
            drawn = check_rng(self.rng).choice(pool, size=int(flagged.sum()))
            replacement = self.encoder_.decode(drawn)
        for j, col in enumerate(self.observed_):
            cats = self.encoder_.categories_[j]
            codes = per_column[j]
            if self.randomization == "merge":
                codes = np.where(flagged, len(cats), codes)
                # a marker no value of the column equals (data may hold "*" itself)
                marker = safe_marker(self.marker, cats)
                categories = cats.append(pd.Index([marker])) if flagged.any() else cats
            else:
                if flagged.any():
                    codes[flagged] = replacement[j]
                categories = cats
            # codes are valid by construction (unseen tuples are always flagged and replaced)
            out[col] = pd.Categorical.from_codes(
                codes, categories=pd.Index(categories), validate=False
            )
        index = frame.index if isinstance(frame, pd.DataFrame) else None
        return pd.DataFrame(out, index=index)

    def evaluate(
        self, X: pd.DataFrame | ArrayLike, sensitive: str | ArrayLike
    ) -> WatchdogEvaluation:
        """Guarantee, utility and leakage of the fitted watchdog on other records (held out).

        Computed exactly on the empirical distribution of ``X``: the released set is the one
        chosen at fit time, tuples unseen at fit time count as flagged (as :meth:`transform`
        treats them), and the release is the merged one.
        """
        check_is_fitted(self, "keep_")
        if self.records_ is not None:
            raise ValidationError(
                "evaluate() computes exact measures over observed tuples and needs the plug-in "
                "watchdog; with a neural estimator use score_samples() on held-out records."
            )
        frame, s_values, _ = as_frame_and_sensitive(X, sensitive, self.observed_)
        labels = pd.Index(self.sensitive_labels_)
        s_codes = labels.get_indexer(pd.Index(s_values))
        if (s_codes < 0).any():
            bad = s_values[s_codes < 0].iloc[0]
            raise ValidationError(
                f"`sensitive` must take values seen at fit time {list(labels)}; got {bad!r}."
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            _, symbols, _ = self._symbols(frame)
        n_x = self.encoder_.n_symbols
        cols = np.where(symbols >= 0, symbols, n_x)  # one extra column for unseen tuples
        p = joint_counts(s_codes, cols, len(labels), n_x + 1) / len(frame)
        keep = np.append(self.keep_, False)
        risk = _symbol_risk(p)
        randomized, effective = _effective_level(p, keep, risk)
        eps = float(self.guarantee_.threshold)
        guarantee = Guarantee(
            epsilon=effective,
            delta=_breach(p, keep, eps),
            threshold=eps,
            randomized_epsilon=randomized,
            flagged_probability=float(p[:, ~keep].sum()),
            n_flagged_symbols=int(np.count_nonzero(~keep)),
        )
        # Prop. 2 bounds the leakage only when every released symbol meets epsilon; on held-out
        # records a kept symbol may not, and then gamma bounds nothing (reported as inf)
        kept_ok = bool(np.all(risk[keep] <= eps + 1e-12))
        return WatchdogEvaluation(
            guarantee=guarantee,
            gamma_bound=_gamma(p.sum(axis=0), keep, eps) if kept_ok else math.inf,
            utility=_utility(p.sum(axis=0), keep),
            leakage_before=leakage_report(p),
            leakage_after=leakage_report(release_joint(p, keep)),
            n_records=len(frame),
            n_unseen=int(np.count_nonzero(symbols < 0)),
        )

    def fit_transform(
        self,
        X: pd.DataFrame | ArrayLike,
        sensitive: str | ArrayLike,
        observed: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """``fit`` then ``transform`` on the same records (see the PrivacyWarning it issues)."""
        warnings.warn(
            "the lift is estimated on the very records being released: the guarantee holds for "
            "the fitted (empirical) distribution; hold out data to check it generalises.",
            PrivacyWarning,
            stacklevel=2,
        )
        return self.fit(X, sensitive, observed).transform(X)
