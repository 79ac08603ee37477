"""The privacy watchdog on discrete data (Hsu, Asoodeh, Calmon; Sadeghi, Ding, Rakotoarivelo).

On a known joint pmf ``p[s, x]``: the bi-partition and its critical epsilons, the release channel,
its bounds and optimal level, its utility, the (epsilon, delta) relaxation, and the tradeoff
curve. On a table: :class:`Watchdog`.
"""

from ._bounds import OptimalEpsilon, gamma_bound, optimal_epsilon
from ._estimator import Guarantee, RecordScores, Watchdog, WatchdogEvaluation
from ._learned_mechanism import LEARNED_KIND, LearnedWatchdogMechanism
from ._mechanism import (
    WatchdogMechanism,
    WatchdogUtility,
    partition_channel,
    watchdog_channel,
    watchdog_mechanism,
    watchdog_utility,
)
from ._partition import critical_epsilons, partition, symbol_risk
from ._records import flagged_set_guarantee
from ._relaxed import RelaxedWatchdogResult, breach_probability, relaxed_watchdog
from ._table import safe_marker
from ._tradeoff import TradeoffCurve, record_tradeoff, tradeoff

__all__ = [
    "LEARNED_KIND",
    "Guarantee",
    "LearnedWatchdogMechanism",
    "OptimalEpsilon",
    "RecordScores",
    "RelaxedWatchdogResult",
    "TradeoffCurve",
    "Watchdog",
    "WatchdogEvaluation",
    "WatchdogMechanism",
    "WatchdogUtility",
    "breach_probability",
    "critical_epsilons",
    "flagged_set_guarantee",
    "gamma_bound",
    "optimal_epsilon",
    "partition",
    "partition_channel",
    "record_tradeoff",
    "relaxed_watchdog",
    "safe_marker",
    "symbol_risk",
    "tradeoff",
    "watchdog_channel",
    "watchdog_mechanism",
    "watchdog_utility",
]
