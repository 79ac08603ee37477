r"""The release method ``relaxed``: the (epsilon, delta) watchdog of Sadeghi et al. (Alg. 1).

On the records in memory counted per observed tuple, the tuples whose lift breaks epsilon are
flagged and merged into ``*``, except those the greedy algorithm exempts (in increasing order
of their mass) while the breach share of the release,
:math:`\sum_y P(y)\,\mathbb 1\{\exists s: |i(s, y)| > \varepsilon\}` (at least Sadeghi's
eq. 11), stays within the budget; ``epsilon_max`` caps every released cell's |log-lift|
(:func:`privwatch.release.merged.relaxed_keep`). **Met** when the held-out breach share's
95 % interval lies within ``delta`` (the search's verdict rule with tolerance delta): the
budget is halved, then dropped, then the flags take a credible margin, until it is
(:func:`privwatch.release.merged.merge_to_pass`). Its mechanism is the map of observed
tuples to themselves or ``*``, saved as a :class:`~privwatch.release.Generalisation`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._merged import decide_merged, merged_leakage, merged_mechanism, merged_rows
from ._method import AuditView, Decision, Measured, ReleaseMethod, SavedMechanism, Step
from ._spec import AuditSpec

__all__ = ["RelaxedMethod"]


class RelaxedMethod(ReleaseMethod):
    """The (epsilon, delta) watchdog on plug-in counts (see the module docstring)."""

    name: ClassVar[str] = "relaxed"
    title: ClassVar[str] = "(epsilon, delta) watchdog"
    routes: ClassVar[tuple[str, ...]] = ("memory",)

    def decide(self, spec: AuditSpec, measured: Measured, step: Step) -> Decision:
        return decide_merged(self.name, spec, measured, step)

    def leakage(self, spec: AuditSpec, measured: Measured, decision: Decision) -> dict[str, Any]:
        return merged_leakage(self.name, spec, measured, decision)

    def rows(self, result: AuditView) -> list[tuple[str, str]]:
        return merged_rows(self.name, result)

    def mechanism(self, result: AuditView) -> SavedMechanism:
        return merged_mechanism(self.name, result)
