r"""The release method ``relaxed``: the (epsilon, delta) watchdog of Sadeghi et al. (Alg. 1).

On the plug-in joint of the records in memory, the observed tuples whose log-lift breaks
epsilon are flagged and merged, except those the greedy algorithm exempts while the breach
probability :math:`\sum_{s, x} p(s, x)\,\mathbb 1\{|i(s, x)| > \varepsilon\}` of the release
stays within ``delta`` (capped at ``epsilon_max``): :class:`~privwatch.watchdog.Watchdog` with
``delta``. Met when the breach probability reached is within delta. Its figures are the
watchdog's (:func:`~privwatch.audit._method_watchdog.watchdog_rows`); it saves no mechanism.
"""

from __future__ import annotations

from typing import ClassVar

from ._method_watchdog import WatchdogMethod

__all__ = ["RelaxedMethod"]


class RelaxedMethod(WatchdogMethod):
    """The (epsilon, delta) watchdog: :class:`WatchdogMethod`'s steps with ``delta`` given
    (the release, the verdict and the rows are the watchdog's, on the plug-in joint)."""

    name: ClassVar[str] = "relaxed"
    title: ClassVar[str] = "(epsilon, delta) watchdog"
    routes: ClassVar[tuple[str, ...]] = ("memory",)
