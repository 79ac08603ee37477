"""The one interface behind :class:`~privwatch.Watchdog`: how the log-lift is estimated.

Two strategies implement it, each readable on its own:

- :class:`~privwatch.watchdog._plugin.PluginStrategy`: exact plug-in counts over the observed
  tuples (Hsu et al. §III; Sadeghi et al. Alg. 1). The *unit* is an observed tuple (a symbol).
- :class:`~privwatch.watchdog._records.RecordStrategy`: a learned log-lift estimator scores every
  record (Hsu et al. §IV). The *unit* is a fit record.

Both flag the units whose |log-lift| exceeds the threshold (``keep`` is True for the released
units), state the guarantee and the utility of that choice, score new records and release them.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._mechanism import WatchdogUtility
from ._results import Guarantee, RecordScores

__all__ = ["WatchdogStrategy"]


class WatchdogStrategy(Protocol):
    """What :class:`~privwatch.Watchdog` asks of a strategy.

    Attributes (after :meth:`fit` and :meth:`threshold`): ``log_lift`` (n_units x |S|),
    ``keep`` (n_units, True = released unchanged), ``guarantee`` and ``utility``.
    """

    log_lift: NDArray[np.float64]
    keep: NDArray[np.bool_]
    guarantee: Guarantee
    utility: WatchdogUtility

    def fit(
        self, frame: pd.DataFrame, s_codes: NDArray[np.int64], s_labels: list[Any], name: str
    ) -> WatchdogStrategy:
        """Estimate the log-lift of every unit from the fit records (``name``: of S)."""
        ...

    def threshold(self, epsilon: float, delta: float | None, epsilon_max: float) -> None:
        """Choose the released units at ``epsilon``; set ``keep``, ``guarantee``, ``utility``."""
        ...

    def unit_index(self) -> pd.Index:
        """The rows of ``log_lift``: observed tuples, or the fit records."""
        ...

    def scores(self, frame: pd.DataFrame) -> RecordScores:
        """Per-record risk and log-lift of the records of ``frame``."""
        ...

    def flag(self, frame: pd.DataFrame) -> NDArray[np.bool_]:
        """True for the records of ``frame`` that the release randomizes."""
        ...

    def release(
        self, frame: pd.DataFrame, randomization: str, marker: str, rng: Any
    ) -> pd.DataFrame:
        """The observed columns of ``frame`` with the flagged records randomized."""
        ...
