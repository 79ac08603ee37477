"""The watchdog's privacy-utility tradeoff over a range of thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._validation import DEFAULT_ATOL, check_nonnegative, check_pmf
from ..exceptions import ValidationError
from ..measures import LeakageReport, leakage_report
from ._bounds import _gamma
from ._mechanism import _effective_level, _utility
from ._partition import _symbol_risk
from ._table import release_joint

__all__ = ["TradeoffCurve", "record_tradeoff", "tradeoff"]


@dataclass(frozen=True)
class TradeoffCurve:
    """Per threshold epsilon: utility, bounds and the exact leakage of the watchdog release.

    ``leakage[i]`` is the :class:`~privwatch.measures.LeakageReport` of the joint of sensitive and
    release at ``epsilons[i]`` (merge randomization; every X^c-invariant choice gives the same
    lift level and utility).
    """

    epsilons: np.ndarray
    mutual_information: np.ndarray
    nmil: np.ndarray
    gamma_bound: np.ndarray
    optimal_epsilon: np.ndarray
    randomized_epsilon: np.ndarray
    flagged_probability: np.ndarray
    leakage: list[LeakageReport] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """One row per epsilon; leakage measures of the release prefixed ``release_``."""
        frame = pd.DataFrame(
            {
                "epsilon": self.epsilons,
                "utility_mi": self.mutual_information,
                "nmil": self.nmil,
                "gamma_bound": self.gamma_bound,
                "optimal_epsilon": self.optimal_epsilon,
                "randomized_epsilon": self.randomized_epsilon,
                "flagged_probability": self.flagged_probability,
            }
        )
        if self.leakage:
            rel = pd.DataFrame([r.to_dict() for r in self.leakage]).drop(columns=["base", "alpha"])
            frame = pd.concat([frame, rel.add_prefix("release_")], axis=1)
        return frame

    def to_dict(self) -> dict[str, list[float]]:
        return {str(k): [float(v) for v in col] for k, col in self.to_frame().items()}


def tradeoff(
    p: ArrayLike,
    epsilons: Sequence[float] | np.ndarray,
    *,
    alpha: float = 2.0,
    atol: float = DEFAULT_ATOL,
) -> TradeoffCurve:
    """Compute the watchdog tradeoff curve of ``p[s, x]`` over ``epsilons``.

    Utility is I(X;Y) of Hsu et al. eq. (11) and NMIL (Sadeghi eq. 9); privacy is reported as the
    gamma bound (Hsu Prop. 2), the optimal level (Sadeghi Cor. 1), and every measure of
    :mod:`privwatch.measures` computed exactly on the joint of S and the release.

    Examples
    --------
    >>> c = tradeoff([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]], [0.5, 1.0])
    >>> c.optimal_epsilon.round(4).tolist(), c.nmil.round(4).tolist()
    ([0.0, 0.6931], [0.5256, 0.0])
    """
    arr = check_pmf(p, atol=atol)
    eps_list = [check_nonnegative(e, "epsilons", allow_inf=True) for e in np.ravel(epsilons)]
    risk = _symbol_risk(arr)  # one pass; each epsilon only re-thresholds it
    p_x = arr.sum(axis=0)
    rows: list[tuple[float, ...]] = []
    reports: list[LeakageReport] = []
    for eps in eps_list:
        keep = risk <= eps
        util = _utility(p_x, keep)
        randomized, effective = _effective_level(arr, keep, risk)
        rows.append(
            (
                eps,
                util.mutual_information,
                util.nmil,
                _gamma(p_x, keep, eps),
                effective,
                randomized,
                util.flagged_probability,
            )
        )
        # the merged release: kept columns plus one column for the flagged set (no dense
        # |X| x |X| channel; every X^c-invariant randomization gives the same leakage)
        reports.append(leakage_report(release_joint(arr, keep), alpha=alpha))
    c = np.array(rows, dtype=float).reshape(-1, 7).T
    return TradeoffCurve(c[0], c[1], c[2], c[3], c[4], c[5], c[6], leakage=reports)


def record_tradeoff(risk: ArrayLike, epsilons: Sequence[float] | np.ndarray) -> pd.DataFrame:
    """Watchdog tradeoff from per-record risk scores, every record its own symbol (mass 1/n).

    For each epsilon: the flagged fraction, the utility I(X;Y) of Hsu et al. eq. (11) with
    :math:`P_X(x_i) = 1/n` (so :math:`H_{\\mathcal{X}_\varepsilon} = (k/n)\\log n` for k kept
    records) and the gamma bound of Prop. 2. This is how the tradeoff is drawn from a learned
    log-lift estimator, whose records have no shared symbols.

    Examples
    --------
    >>> record_tradeoff([0.1, 0.2, 0.9, 1.5], [0.5]).round(3).to_dict("records")
    [{'epsilon': 0.5, 'flagged_fraction': 0.5, 'utility_mi': 1.04, 'gamma_bound': 1.294}]
    """
    r = np.asarray(risk, dtype=float)
    if r.ndim != 1 or r.size == 0:
        raise ValidationError(f"`risk` must be a non-empty vector; got shape {r.shape}.")
    n = r.size
    p_x = np.full(n, 1.0 / n)
    rows = []
    for e in np.ravel(epsilons):
        eps = check_nonnegative(float(e), "epsilons", allow_inf=True)
        keep = r <= eps
        util = _utility(p_x, keep)
        rows.append(
            {
                "epsilon": eps,
                "flagged_fraction": util.flagged_probability,
                "utility_mi": util.mutual_information,
                "gamma_bound": _gamma(p_x, keep, eps),
            }
        )
    return pd.DataFrame(rows)
