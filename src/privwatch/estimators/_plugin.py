"""Plug-in (count-based) log-lift estimator for discrete observed data."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._base import check_is_fitted
from .._encoder import ObservedEncoder
from .._rng import RNGLike
from .._validation import check_nonnegative
from ..exceptions import PrivacyWarning
from ..joint import plugin_estimate
from ..measures import log_lift as exact_log_lift
from ..preprocessing import DEFAULT_MAX_LEVELS
from ._base import FloatArray, LiftEstimator
from ._plugin_intervals import (
    MutualInformationEstimate,
    lift_intervals,
    miller_madow_mutual_information,
    tuple_frame,
)
from ._preprocess import as_frame

__all__ = ["PluginLift"]


class PluginLift(LiftEstimator):
    r"""Log-lift from counts of the observed value tuples.

    .. math:: \hat i(s, x) = \log \frac{(n(s, x) + a)\,(n + a|S||X|)}{(n(s) + a|X|)(n(x) + a|S|)}

    with additive smoothing ``a``. Tuples unseen at fit time get NaN (and risk inf): nothing is
    known about them. Numeric columns with more than ``max_levels`` values must be binned first.

    Examples
    --------
    >>> est = PluginLift().fit(np.array([[0], [0], [1], [1]] * 5), [0, 1, 1, 1] * 5)
    >>> est.log_lift(np.array([[0], [1]])).round(3)
    array([[ 0.693, -0.405],
           [  -inf,  0.288]])
    """

    def __init__(self, *, smoothing: float = 0.0, max_levels: int | None = DEFAULT_MAX_LEVELS):
        self.smoothing = smoothing
        self.max_levels = max_levels

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> PluginLift:
        check_nonnegative(self.smoothing, "smoothing")
        frame = as_frame(X).rename(columns=str)  # a renamed copy: the caller's frame is untouched
        cols = list(frame.columns)
        codes = self._fit_sensitive(s, len(frame))
        self.encoder_, self.counts_, p = plugin_estimate(
            frame,
            cols,
            codes,
            len(self.sensitive_labels_),
            smoothing=self.smoothing,
            max_levels=self.max_levels,
        )
        self.table_ = np.ascontiguousarray(exact_log_lift(p).T)
        self.columns_ = cols
        return self

    def mutual_information_interval(
        self, level: float = 0.9, n_bootstrap: int = 200, rng: RNGLike = None
    ) -> MutualInformationEstimate:
        """I(S;X) of the fit counts: plug-in, Miller-Madow corrected, and a bootstrap interval
        (see :func:`miller_madow_mutual_information`)."""
        check_is_fitted(self, "counts_")
        return miller_madow_mutual_information(
            self.counts_, level=level, n_bootstrap=n_bootstrap, rng=rng
        )

    def tuple_intervals(self, level: float = 0.9) -> pd.DataFrame:
        """Each observed tuple seen at fit time (row = its code in ``encoder_``): n(x), and per
        sensitive value the plug-in log-lift with its exact Clopper-Pearson interval (see
        :func:`lift_intervals`)."""
        check_is_fitted(self, "counts_")
        return tuple_frame(lift_intervals(self.counts_, level), list(self.sensitive_labels_))

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        check_is_fitted(self, "table_")
        frame = as_frame(X, self.columns_ if not isinstance(X, pd.DataFrame) else None)
        frame = frame.rename(columns=str)
        sym = self.encoder_.transform(frame)
        out = np.take(self.table_, np.maximum(sym, 0), axis=0)
        if (sym < 0).any():
            warnings.warn(
                f"{int((sym < 0).sum())} records have observed values unseen at fit time; "
                "their log-lift is unknown (NaN).",
                PrivacyWarning,
                stacklevel=2,
            )
            out[sym < 0] = np.nan
        return out

    def save(self, path: str | Path) -> None:
        """Save as JSON (no code is executed on load)."""
        check_is_fitted(self, "table_")
        state = {
            "kind": "PluginLift",
            "params": self.get_params(),
            "sensitive_labels": self.sensitive_labels_,
            "prior": self.prior_.tolist(),
            "columns": self.columns_,
            "encoder": self.encoder_.to_dict(),
            "counts": self.counts_.tolist(),
            "table": np.where(np.isinf(self.table_), -1e308, self.table_).tolist(),
        }
        Path(path).write_text(json.dumps(state))

    @classmethod
    def load(cls, path: str | Path) -> PluginLift:
        state = json.loads(Path(path).read_text())
        est = cls(**state["params"])
        est.sensitive_labels_ = state["sensitive_labels"]
        est.prior_ = np.asarray(state["prior"])
        est.columns_ = state["columns"]
        est.encoder_ = ObservedEncoder.from_dict(state["encoder"])
        if "counts" in state:
            est.counts_ = np.asarray(state["counts"], dtype=np.int64)
        table = np.asarray(state["table"], dtype=float)
        est.table_ = np.where(table <= -1e308, -np.inf, table)
        return est
