"""Plug-in (count-based) log-lift estimator for discrete observed data."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._base import check_is_fitted
from .._encoder import ObservedEncoder
from .._rng import RNGLike
from .._serialization import check_array, read_model, reconstructing, write_model
from .._validation import check_nonnegative
from ..exceptions import PrivacyWarning
from ..joint import plugin_estimate
from ..measures import log_lift as exact_log_lift
from ..preprocessing import DEFAULT_MAX_LEVELS
from ._base import LiftEstimator
from ._lift import FloatArray
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
        """Save as a checksummed privwatch model file (JSON; no code is executed on load)."""
        check_is_fitted(self, "table_")
        encoder = self.encoder_.to_dict()
        state = {
            "params": self.get_params(),
            "sensitive_labels": list(self.sensitive_labels_),
            "columns": self.columns_,
            "encoder": {k: v for k, v in encoder.items() if k != "keys"},
        }
        arrays = {
            "prior": np.asarray(self.prior_, dtype=np.float64),
            "counts": np.asarray(self.counts_, dtype=np.int64),
            "table": np.asarray(self.table_, dtype=np.float64),
            "keys": np.asarray(encoder["keys"], dtype=np.int64),
        }
        write_model(path, "PluginLift", state, arrays)

    @classmethod
    def load(cls, path: str | Path) -> PluginLift:
        """Load a file written by :meth:`save`; a tampered or truncated file raises
        :class:`~privwatch.exceptions.TamperedFileError` (see :mod:`privwatch._serialization`)."""
        state, arrays = read_model(path, "PluginLift")
        with reconstructing(path):
            prior = check_array(path, arrays, "prior", ndim=1, low=0.0)
            counts = check_array(path, arrays, "counts", ndim=2, low=0)
            table = check_array(path, arrays, "table", ndim=2, allow_neg_inf=True)
            keys = check_array(path, arrays, "keys", ndim=1, low=0)
            labels = list(state["sensitive_labels"])
            n_s, n_sym = len(labels), len(keys)
            if not (
                prior.shape == (n_s,)
                and table.shape == (n_sym, n_s)
                and counts.shape == (n_s, n_sym)
                and n_s >= 1
                and abs(float(prior.sum()) - 1.0) <= 1e-6
                and len(np.unique(keys)) == n_sym
            ):
                raise ValueError(
                    f"inconsistent shapes: prior {prior.shape}, table {table.shape}, counts "
                    f"{counts.shape}, {n_s} labels, {n_sym} keys (or prior not a pmf)"
                )
            est = cls(**state["params"])
            check_nonnegative(est.smoothing, "smoothing")
            est.sensitive_labels_ = labels
            est.prior_ = prior
            est.columns_ = [str(c) for c in state["columns"]]
            est.encoder_ = ObservedEncoder.from_dict(dict(state["encoder"], keys=keys.tolist()))
            sizes = [len(c) for c in est.encoder_.categories_]
            if list(est.encoder_.columns) != est.columns_ or int(keys.max(initial=0)) >= max(
                math.prod(sizes), 1
            ):
                raise ValueError("encoder columns or symbol keys do not match the categories")
            est.counts_ = counts
            est.table_ = table
        return est
