"""The plug-in strategy of the watchdog: exact counts over observed tuples (Hsu et al. §III).

The log-lift of every observed tuple is estimated by (optionally smoothed) plug-in counts; a
tuple is released when ``max_s |i(s, x)| <= epsilon`` (or by the greedy (epsilon, delta)
relaxation of Sadeghi et al. Alg. 1), and the guarantee is computed exactly on the fitted pmf.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._encoder import joint_counts
from .._rng import check_rng
from ..exceptions import PrivacyWarning
from ..joint import Joint, plugin_estimate, warn_sparse
from ..measures import leakage_report, log_lift
from ._bounds import _gamma
from ._mechanism import _effective_level, _utility
from ._partition import _symbol_risk
from ._relaxed import _breach, relaxed_watchdog
from ._results import Guarantee, RecordScores, WatchdogEvaluation
from ._table import flags_of, release_joint, safe_marker

__all__ = ["PluginStrategy"]

FloatArray = NDArray[np.float64]


def _guarantee(p: FloatArray, keep: NDArray[np.bool_], eps: float) -> Guarantee:
    """The exact guarantee of releasing the symbols ``keep`` of ``p`` at threshold ``eps``."""
    randomized, effective = _effective_level(p, keep, _symbol_risk(p))
    return Guarantee(
        effective_epsilon=effective,
        breach_probability=_breach(p, keep, eps),
        threshold=eps,
        randomized_epsilon=randomized,
        flagged_probability=float(p[:, ~keep].sum()),
        n_flagged_symbols=int(np.count_nonzero(~keep)),
    )


class PluginStrategy:
    """Plug-in watchdog over the observed tuples of ``columns``; the unit is an observed tuple."""

    def __init__(self, columns: list[str], smoothing: float, max_levels: int | None) -> None:
        self.columns = columns
        self.smoothing = smoothing
        self.max_levels = max_levels

    def fit(
        self, frame: pd.DataFrame, s_codes: NDArray[np.int64], s_labels: list[Any], name: str = "s"
    ) -> PluginStrategy:
        self.encoder, counts, p = plugin_estimate(
            frame, self.columns, s_codes, len(s_labels), smoothing=self.smoothing,
            max_levels=self.max_levels,
        )  # fmt: skip
        warn_sparse(counts)
        self.sensitive_labels = s_labels
        self.joint = Joint(
            p, s_labels, None, sensitive_name=name, observed_name=",".join(self.columns),
            counts=counts,
        )  # fmt: skip
        # (n_observed, n_sensitive), C-ordered so that records gather whole rows
        self.log_lift = np.ascontiguousarray(log_lift(p).T)
        self.risk = _symbol_risk(p)
        return self

    def threshold(self, epsilon: float, delta: float | None, epsilon_max: float) -> None:
        p = self.joint.p
        if delta is None:
            keep = self.risk <= epsilon
        else:
            keep = relaxed_watchdog(p, epsilon, delta, epsilon_max).keep
        # the guarantee is about the records released: with smoothing, the flags come from the
        # smoothed estimate but the level is computed on the unsmoothed (empirical) counts
        counts = self.joint.counts
        emp = p if counts is None or counts.sum() == 0 else counts / counts.sum()
        self.keep = keep
        self.guarantee = _guarantee(emp, keep, epsilon)
        self.utility = _utility(p.sum(axis=0), keep)

    def unit_index(self) -> pd.Index:
        return pd.MultiIndex.from_tuples(self.encoder.labels(), names=self.columns)

    def _symbols(
        self, frame: pd.DataFrame
    ) -> tuple[NDArray[np.integer], list[NDArray[np.integer]]]:
        """(symbol of each record, per-column codes); warns about unseen tuples."""
        key, per_column = self.encoder.column_codes(frame)
        symbols = self.encoder.symbols_of(key)
        n_unseen = int(np.count_nonzero(symbols < 0))
        if n_unseen:
            warnings.warn(
                f"{n_unseen} records have observed values never seen at fit time; they are "
                "flagged (risk inf) and randomized, never released as they are.",
                PrivacyWarning,
                stacklevel=4,
            )
        return symbols, per_column

    def scores(self, frame: pd.DataFrame) -> RecordScores:
        symbols, _ = self._symbols(frame)
        known = symbols >= 0
        labels = list(self.sensitive_labels)
        if known.all():
            ll = np.take(self.log_lift, symbols, axis=0)
            return RecordScores(np.take(self.risk, symbols), ll, known, labels)
        safe = np.where(known, symbols, 0)
        ll = np.take(self.log_lift, safe, axis=0)
        ll[~known] = np.nan
        return RecordScores(np.where(known, self.risk[safe], np.inf), ll, known, labels)

    def flag(self, frame: pd.DataFrame) -> NDArray[np.bool_]:
        return flags_of(self.keep, self._symbols(frame)[0])

    def release(
        self, frame: pd.DataFrame, randomization: str, marker: str, rng: Any
    ) -> pd.DataFrame:
        symbols, per_column = self._symbols(frame)
        flagged = flags_of(self.keep, symbols)
        out = {}
        if randomization == "uniform" and flagged.any():
            pool = np.flatnonzero(~self.keep)
            replacement = self.encoder.decode(check_rng(rng).choice(pool, size=int(flagged.sum())))
        for j, col in enumerate(self.columns):
            cats = self.encoder.categories_[j]
            codes = per_column[j]
            if randomization == "merge":
                codes = np.where(flagged, len(cats), codes)
                # a marker no value of the column equals (data may hold "*" itself)
                merged = safe_marker(marker, cats)
                categories = cats.append(pd.Index([merged])) if flagged.any() else cats
            else:
                if flagged.any():
                    codes[flagged] = replacement[j]
                categories = cats
            # codes are valid by construction (unseen tuples are always flagged and replaced)
            out[col] = pd.Categorical.from_codes(
                codes, categories=pd.Index(categories), validate=False
            )
        return pd.DataFrame(out, index=frame.index)

    def evaluate(self, frame: pd.DataFrame, s_codes: NDArray[np.int64]) -> WatchdogEvaluation:
        """Exact guarantee, utility and leakage of the fitted release on the records of
        ``frame`` (unseen tuples count as flagged, as :meth:`release` treats them)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            symbols, _ = self._symbols(frame)
        n_x = self.encoder.n_symbols
        cols = np.where(symbols >= 0, symbols, n_x)  # one extra column for unseen tuples
        n_s = len(self.sensitive_labels)
        p = joint_counts(s_codes, cols, n_s, n_x + 1) / len(frame)
        keep = np.append(self.keep, False)
        eps = self.guarantee.threshold
        # Prop. 2 bounds the leakage only when every released symbol meets epsilon; on held-out
        # records a kept symbol may not, and then gamma bounds nothing (reported as inf)
        kept_ok = bool(np.all(_symbol_risk(p)[keep] <= eps + 1e-12))
        return WatchdogEvaluation(
            guarantee=_guarantee(p, keep, eps),
            gamma_bound=_gamma(p.sum(axis=0), keep, eps) if kept_ok else math.inf,
            utility=_utility(p.sum(axis=0), keep),
            leakage_before=leakage_report(p),
            leakage_after=leakage_report(release_joint(p, keep)),
            n_records=len(frame),
            n_unseen=int(np.count_nonzero(symbols < 0)),
        )
