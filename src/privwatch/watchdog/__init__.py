"""The privacy watchdog on discrete data (Hsu, Asoodeh, Calmon; Sadeghi, Ding, Rakotoarivelo).

On a known joint pmf ``p[s, x]``: the bi-partition and its critical epsilons, the release channel,
its bounds and optimal level, its utility, the (epsilon, delta) relaxation, and the tradeoff
curve. On a table: :class:`Watchdog`.

Every name is imported on first use (PEP 562), so that importing the package costs only what is
used (scikit-learn and PyTorch load only with the learned families)."""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ._bounds import OptimalEpsilon, gamma_bound, optimal_epsilon
    from ._estimator import Watchdog
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
    from ._results import Guarantee, RecordScores, WatchdogEvaluation
    from ._table import safe_marker
    from ._tradeoff import TradeoffCurve, record_tradeoff, tradeoff

#: Where each exported name lives (the module imported on its first use).
_WHERE = {
    "Guarantee": "._results",
    "LEARNED_KIND": "._learned_mechanism",
    "LearnedWatchdogMechanism": "._learned_mechanism",
    "OptimalEpsilon": "._bounds",
    "RecordScores": "._results",
    "RelaxedWatchdogResult": "._relaxed",
    "TradeoffCurve": "._tradeoff",
    "Watchdog": "._estimator",
    "WatchdogEvaluation": "._results",
    "WatchdogMechanism": "._mechanism",
    "WatchdogUtility": "._mechanism",
    "breach_probability": "._relaxed",
    "critical_epsilons": "._partition",
    "flagged_set_guarantee": "._records",
    "gamma_bound": "._bounds",
    "optimal_epsilon": "._bounds",
    "partition": "._partition",
    "partition_channel": "._mechanism",
    "record_tradeoff": "._tradeoff",
    "relaxed_watchdog": "._relaxed",
    "safe_marker": "._table",
    "symbol_risk": "._partition",
    "tradeoff": "._tradeoff",
    "watchdog_channel": "._mechanism",
    "watchdog_mechanism": "._mechanism",
    "watchdog_utility": "._mechanism",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
