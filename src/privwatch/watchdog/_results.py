"""Result objects of the table watchdog: guarantee, per-record scores, held-out evaluation."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..measures import LeakageReport
from ._mechanism import WatchdogUtility

__all__ = ["Guarantee", "RecordScores", "WatchdogEvaluation"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Guarantee:
    """The lift-privacy guarantee of a watchdog release (exact on the fitted pmf for the
    plug-in watchdog; an estimate for the record-level one, as ``basis`` says).

    ``effective_epsilon``: the lift-privacy level of the release, max |log-lift| between
    sensitive and release (nats); ``breach_probability``: probability that a released record's
    |log-lift| exceeds ``threshold`` (Sadeghi eq. 11); ``threshold``: the ``epsilon`` the units
    were flagged at; ``randomized_epsilon``: level of the randomized (flagged) set alone;
    ``flagged_probability``: probability mass of the flagged units; ``n_flagged_symbols``: how
    many units (observed tuples, or fit records) are flagged.
    """

    effective_epsilon: float
    breach_probability: float
    threshold: float
    randomized_epsilon: float
    flagged_probability: float
    n_flagged_symbols: int
    basis: str = "exact on the fitted (plug-in) distribution"

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    def explain(self) -> str:
        """The guarantee in plain words."""
        e = self.effective_epsilon
        if math.isinf(e):
            return "No finite lift-privacy level: some released value rules out a sensitive value."
        text = (
            f"Seeing any released record changes the odds of any sensitive value by a factor "
            f"between {math.exp(-e):.3g} and {math.exp(e):.3g} (lift privacy epsilon = {e:.3g} "
            f"nats), so I(S;Y), maximal leakage and the Bayes leakage are all at most {e:.3g} nats"
        )
        if self.breach_probability > 0:
            text += (
                f"; the threshold {self.threshold:.3g} is exceeded with probability "
                f"{self.breach_probability:.3g}"
            )
        if not self.basis.startswith("exact"):
            text += f" ({self.basis}: an estimate, not a proof)"
        return text + "."


@dataclass(frozen=True)
class RecordScores:
    """Per-record risk: ``risk[i] = max_s |i(s, x_i)|`` and the full ``log_lift[i, s]``.

    ``known[i]`` is False for records whose observed tuple was not seen at fit time (risk inf,
    log-lift NaN). Columns of ``log_lift`` follow ``sensitive_labels`` (sorted).
    """

    risk: FloatArray
    log_lift: FloatArray
    known: NDArray[np.bool_]
    sensitive_labels: list[Any]

    def to_frame(self, index: pd.Index | None = None) -> pd.DataFrame:
        frame = pd.DataFrame(
            self.log_lift, columns=[f"log_lift[{s}]" for s in self.sensitive_labels], index=index
        )
        frame.insert(0, "risk", self.risk)
        frame["known"] = self.known
        return frame


@dataclass(frozen=True)
class WatchdogEvaluation:
    """What a fitted watchdog does to a set of records (see :meth:`Watchdog.evaluate`).

    ``guarantee.breach_probability`` here is the measured breach probability of the threshold
    on these records (Sadeghi eq. 11), ``gamma_bound`` Hsu et al.'s Prop. 2 bound on them (inf
    when a released symbol breaks epsilon on these records: the bound's premise fails there).
    """

    guarantee: Guarantee
    gamma_bound: float
    utility: WatchdogUtility
    leakage_before: LeakageReport
    leakage_after: LeakageReport
    n_records: int
    n_unseen: int

    def to_dict(self) -> dict[str, object]:
        return {
            "guarantee": self.guarantee.to_dict(),
            "gamma_bound": self.gamma_bound,
            "utility": self.utility.to_dict(),
            "leakage_before": self.leakage_before.to_dict(),
            "leakage_after": self.leakage_after.to_dict(),
            "n_records": self.n_records,
            "n_unseen": self.n_unseen,
        }
