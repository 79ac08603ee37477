"""The :class:`Watchdog` estimator: score, flag and release the records of a table."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin

from .._base import check_is_fitted
from .._rng import RNGLike
from .._validation import check_nonnegative, check_probability
from ..estimators import LiftEstimator, PluginLift
from ..exceptions import PrivacyWarning, ValidationError
from ..joint import Joint, encode_sensitive
from ..measures import LeakageReport, leakage_report
from ..preprocessing import DEFAULT_MAX_LEVELS
from ._mechanism import WatchdogUtility
from ._plugin import PluginStrategy
from ._records import RecordStrategy, is_record_level
from ._results import Guarantee, RecordScores, WatchdogEvaluation
from ._strategy import WatchdogStrategy
from ._table import as_frame_and_sensitive, observed_frame, release_joint

__all__ = ["Guarantee", "RecordScores", "Watchdog", "WatchdogEvaluation"]


class Watchdog(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Privacy watchdog on a table (Hsu, Asoodeh, Calmon §III–IV; Sadeghi, Ding, Rakotoarivelo).

    Estimates the log-lift :math:`i(s, x) = \\log P_{S|X}(s|x) / P_S(s)` of the records, flags
    those whose :math:`\\max_s |i(s, x)|` exceeds ``epsilon``, and releases the table with the
    flagged records randomized X^c-invariantly (the optimal randomization, Sadeghi Cor. 1).

    A scikit-learn transformer: ``clone``, ``Pipeline``, ``GridSearchCV`` and ``set_output`` work.
    The sensitive attribute is given **once**: as a column name in the constructor
    (``Watchdog(sensitive="race")``, the column then travels through a ``Pipeline``'s earlier
    steps and never reaches the release), or as ``y`` in ``fit(X, y)``. Nothing else is read
    from ``y``.

    Parameters
    ----------
    epsilon : float
        Threshold on |log-lift| (nats).
    sensitive : str or None
        Column of ``X`` holding the sensitive attribute; None: pass the labels as ``y``.
    observed : list of str or None
        Observed columns; None: every column but ``sensitive`` (``x0, x1, ...`` for arrays).
    delta : float or None
        None: strict watchdog. A probability: the (epsilon, delta) relaxation (Sadeghi Alg. 1),
        plug-in strategy only.
    epsilon_max : float
        With ``delta``: the hard cap on the effective |log-lift|.
    randomization : {"merge", "uniform"}
        ``merge``: flagged records get one marker value in every observed column; ``uniform``:
        flagged records get a tuple drawn uniformly from the flagged units.
    smoothing : float
        Additive smoothing of the counts (plug-in strategy).
    max_levels : int or None
        Numeric observed columns with more distinct values must be binned first
        (:func:`privwatch.bin_columns`).
    marker : str
        The marker value of merged records.
    rng : int, Generator or None
        Randomness of ``uniform`` releases.
    estimator : LiftEstimator or None
        Chooses the strategy. None or a :class:`~privwatch.estimators.PluginLift` (whose
        smoothing is then used): the exact **plug-in** strategy over observed tuples. Any other
        log-lift estimator (:class:`~privwatch.estimators.ClassifierLift`, ...): the
        **record-level** strategy of Hsu et al. §IV — a record is flagged when its estimated
        (cross-fitted) |log-lift| exceeds epsilon; the guarantee is then an estimate.

    Attributes
    ----------
    strategy_ : PluginStrategy or RecordStrategy
        The fitted strategy; its *unit* is an observed tuple (plug-in) or a fit record.
    guarantee_, utility_, keep_, lift_ :
        The guarantee, the utility, the released units and the log-lift per unit.
    observed_, sensitive_, sensitive_labels_ :
        The observed columns, the sensitive attribute's name and its values (sorted).

    Examples
    --------
    >>> df = pd.DataFrame({"s": [0] * 40 + [1] * 40,
    ...                    "x": ["a"] * 30 + ["b"] * 10 + ["a"] * 10 + ["b"] * 30})
    >>> wd = Watchdog(epsilon=0.3, sensitive="s").fit(df)
    >>> wd.flag(df).mean()
    np.float64(1.0)
    >>> wd.transform(df)["x"].unique().tolist()
    ['*']
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        sensitive: str | None = None,
        observed: Sequence[str] | None = None,
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
        self.sensitive = sensitive
        self.observed = observed
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
        if self.sensitive is not None and not isinstance(self.sensitive, str):
            raise ValidationError(
                f"`sensitive` must be a column name or None; got {type(self.sensitive).__name__}"
                ". Pass labels as fit(X, y)."
            )
        if delta is not None and is_record_level(self.estimator):
            raise ValidationError(
                "`delta` (the (epsilon, delta) relaxation) needs the plug-in watchdog; got "
                f"estimator={type(self.estimator).__name__}."
            )
        return eps, delta, eps_max

    def _strategy(self, cols: list[str]) -> WatchdogStrategy:
        if is_record_level(self.estimator):
            return RecordStrategy(self.estimator, cols)  # type: ignore[arg-type]
        a = self.estimator.smoothing if isinstance(self.estimator, PluginLift) else self.smoothing
        return PluginStrategy(cols, a, self.max_levels)

    def fit(self, X: pd.DataFrame | ArrayLike, y: ArrayLike | None = None) -> Watchdog:
        """Estimate the log-lift of every unit and choose the released set.

        ``X``: a DataFrame or a 2-D array. The sensitive attribute is the column named by
        ``sensitive`` (then ``y`` must be None) or, when ``sensitive`` is None, ``y``: one label
        per record. Returns ``self``.
        """
        eps, delta, eps_max = self._check_params()
        frame, s_values, cols = as_frame_and_sensitive(X, self.sensitive, y, self.observed)
        s_codes, s_labels = encode_sensitive(s_values, str(s_values.name))
        self.observed_ = cols
        self.sensitive_ = str(s_values.name)
        self.sensitive_labels_ = s_labels
        self.n_features_in_ = frame.shape[1]
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        strategy = self._strategy(cols)
        self.strategy_ = strategy.fit(frame, s_codes, s_labels, self.sensitive_)
        self.strategy_.threshold(eps, delta, eps_max)
        return self

    def rethreshold(self, epsilon: float) -> Watchdog:
        """Change ``epsilon`` of a fitted watchdog without re-estimating the log-lift.

        The released set, the guarantee and the utility are recomputed (with the current
        ``delta`` and ``epsilon_max``); no network is retrained. Returns ``self``.
        """
        check_is_fitted(self, "strategy_")
        self.epsilon = epsilon
        self.strategy_.threshold(*self._check_params())
        return self

    # ------------------------------------------------------------------ fitted results
    @property
    def guarantee_(self) -> Guarantee:
        """The lift-privacy guarantee of the release (exact for plug-in, estimated otherwise)."""
        check_is_fitted(self, "strategy_")
        return self.strategy_.guarantee

    @property
    def utility_(self) -> WatchdogUtility:
        """I(X;Y) and NMIL of the release (records count as their own symbols, record-level)."""
        check_is_fitted(self, "strategy_")
        return self.strategy_.utility

    @property
    def keep_(self) -> NDArray[np.bool_]:
        """True for the units released unchanged (observed tuples, or fit records)."""
        check_is_fitted(self, "strategy_")
        return self.strategy_.keep

    @property
    def lift_(self) -> pd.DataFrame:
        """Log-lift per unit (rows) and sensitive value (columns).

        Plug-in: one row per observed tuple (indexed by its values). Record-level: one row per
        fit record (indexed as the fit data), its cross-fitted estimate.
        """
        check_is_fitted(self, "strategy_")
        index = self.strategy_.unit_index()
        return pd.DataFrame(self.strategy_.log_lift, index=index, columns=self.sensitive_labels_)

    def _plugin(self, what: str) -> PluginStrategy:
        check_is_fitted(self, "strategy_")
        if not isinstance(self.strategy_, PluginStrategy):
            raise ValidationError(
                f"{what} needs the plug-in watchdog (exact measures over observed tuples); with "
                "a learned estimator use score_records(X) on held-out records."
            )
        return self.strategy_

    @property
    def joint_(self) -> Joint:
        """The fitted joint pmf of sensitive and observed tuples, with its counts (plug-in)."""
        return self._plugin("joint_").joint

    @property
    def leakage_before_(self) -> LeakageReport:
        """Every leakage measure of S through the observed tuples (exact, fitted pmf)."""
        return leakage_report(self._plugin("leakage_before_").joint.p)

    @property
    def leakage_after_(self) -> LeakageReport:
        """Every leakage measure of S through the release (exact, fitted pmf, merged release)."""
        plugin = self._plugin("leakage_after_")
        return leakage_report(release_joint(plugin.joint.p, plugin.keep))

    # ------------------------------------------------------------------ score, flag, release
    def _frame(self, X: pd.DataFrame | ArrayLike) -> pd.DataFrame:
        check_is_fitted(self, "strategy_")
        return observed_frame(X, self.observed_)

    def score_records(self, X: pd.DataFrame | ArrayLike) -> RecordScores:
        """Per-record risk ``max_s |i(s, x)|``, the full log-lift vector and whether the
        record's observed tuple was seen at fit time."""
        frame = self._frame(X)
        return self.strategy_.scores(frame)

    def score_samples(self, X: pd.DataFrame | ArrayLike) -> NDArray[np.float64]:
        """Per-record risk :math:`\\max_s |i(s, x)|` (nats; inf for tuples unseen at fit time),
        a 1-D float array. Higher is riskier. See :meth:`score_records` for the rest."""
        return np.asarray(self.score_records(X).risk, dtype=np.float64)

    def flag(self, X: pd.DataFrame | ArrayLike) -> NDArray[np.bool_]:
        """True for records to randomize: flagged units and tuples unseen at fit time."""
        frame = self._frame(X)
        return self.strategy_.flag(frame)

    def transform(self, X: pd.DataFrame | ArrayLike) -> pd.DataFrame:
        """The release: the observed columns, flagged records randomized.

        The sensitive column is never part of the release. Plug-in: columns come back as
        categoricals (with the marker as an extra category under ``merge``). Record-level: the
        columns keep their values, as objects when a marker or a drawn record was written in.
        """
        frame = self._frame(X)
        return self.strategy_.release(frame, self.randomization, self.marker, self.rng)

    def fit_transform(
        self, X: pd.DataFrame | ArrayLike, y: ArrayLike | None = None, **fit_params: object
    ) -> pd.DataFrame:
        """``fit`` then ``transform`` on the same records (see the PrivacyWarning it issues)."""
        warnings.warn(
            "the lift is estimated on the very records being released: the guarantee holds for "
            "the fitted (empirical) distribution; hold out data to check it generalises.",
            PrivacyWarning,
            stacklevel=2,
        )
        return self.fit(X, y).transform(X)

    def __sklearn_tags__(self) -> Any:
        """Categorical and string columns are welcome; missing values are refused."""
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []
        return tags

    def get_feature_names_out(self, input_features: object = None) -> NDArray[np.object_]:
        """The columns of the release: the observed columns."""
        check_is_fitted(self, "strategy_")
        return np.asarray(self.observed_, dtype=object)

    def evaluate(
        self, X: pd.DataFrame | ArrayLike, y: ArrayLike | None = None
    ) -> WatchdogEvaluation:
        """Guarantee, utility and leakage of the fitted watchdog on other records (held out).

        The sensitive attribute is read as in :meth:`fit`. Computed exactly on the empirical
        distribution of ``X``: the released set is the one chosen at fit time, tuples unseen at
        fit time count as flagged (as :meth:`transform` treats them), and the release is the
        merged one. Plug-in strategy only.
        """
        plugin = self._plugin("evaluate()")
        frame, s_values, _ = as_frame_and_sensitive(X, self.sensitive, y, self.observed_)
        labels = pd.Index(self.sensitive_labels_)
        s_codes = labels.get_indexer(pd.Index(s_values))
        if (s_codes < 0).any():
            bad = s_values[s_codes < 0].iloc[0]
            raise ValidationError(
                f"`sensitive` must take values seen at fit time {list(labels)}; got {bad!r}."
            )
        return plugin.evaluate(frame, np.asarray(s_codes, dtype=np.int64))
