r"""The release method ``watchdog``: flag the records whose log-lift breaks epsilon, merge them.

The privacy watchdog (Hsu, Asoodeh and Calmon): every record's risk
:math:`\max_s |i(s, x)|` is its (estimated) log-lift; a record is flagged when it exceeds
epsilon and released with every observed value replaced by a marker (the flagged records
merged into one released value, the X-invariant randomization of Sadeghi et al. Cor. 1).
With a learned estimator (Hsu et al. §IV) the log-lift is cross-fitted, on the records in
memory (:class:`~privwatch.watchdog.Watchdog`) or on Parquet batches the streamed route scores
while it labels them (:func:`~privwatch.watchdog.flagged_set_guarantee` of their counts); the
guarantee is then an estimate, not a proof. On records in memory its mechanism is the scorer
(the model fitted on every record, its fold models and the recalibration), saved through the
checked model format (:class:`~privwatch.watchdog.LearnedWatchdogMechanism`).

With plug-in counts (no learned estimator) the units are the observed tuples: flagged when their
lift breaks epsilon, merged into ``*``, the flags' margin grown until the held-out breach
share's 95 % interval lies within ``held_out_tolerance`` (the search's verdict rule;
``audit/_merged.py``, :func:`privwatch.release.merged.merge_to_pass`); the map of tuples to
themselves or ``*`` is then its mechanism, saved as a :class:`~privwatch.release.Generalisation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from .._numbers import fmt, pct
from ..watchdog import Guarantee, flagged_set_guarantee
from ._leakage import stable_leakage
from ._learned import (
    LearnedRelease,
    decide_learned,
    learned_leakage,
    learned_mechanism,
    learned_rows,
)
from ._merged import decide_merged, merged_leakage, merged_mechanism, merged_rows
from ._method import (
    AuditView,
    Decision,
    Measured,
    ReleaseMethod,
    SavedMechanism,
    Step,
)
from ._spec import AuditSpec

if TYPE_CHECKING:  # the watchdog's estimator loads scikit-learn
    from ..watchdog import Watchdog

__all__ = ["WatchdogMethod", "leakage_of_watchdog", "watchdog_rows"]


class WatchdogMethod(ReleaseMethod):
    """The watchdog with a learned log-lift (see the module docstring)."""

    name: ClassVar[str] = "watchdog"
    title: ClassVar[str] = "privacy watchdog"
    routes: ClassVar[tuple[str, ...]] = ("memory", "stream")

    def decide(self, spec: AuditSpec, measured: Measured, step: Step) -> Decision:
        m = measured
        if m.joint is not None and m.records is not None:  # plug-in units: observed tuples
            return decide_merged(self.name, spec, m, step)
        if m.probe is None or m.records is None:
            # streamed: the route scores and flags every record at epsilon while it labels it
            return Decision(self.name, m.epsilon, m.epsilon_reason)
        return decide_learned(spec, m, step)  # learned log-lift, aimed at the held-out verdict

    def leakage(self, spec: AuditSpec, measured: Measured, decision: Decision) -> dict[str, Any]:
        m, d = measured, decision
        if isinstance(d.detail, LearnedRelease):
            return learned_leakage(spec, m, d)
        if d.detail is not None:
            return merged_leakage(self.name, spec, m, d)
        if d.watchdog is None or m.records is None:
            return _streamed_leakage(m, d)
        assert d.log_lift is not None
        return leakage_of_watchdog(
            d.watchdog, spec.delta, m.records[m.sensitive], d.log_lift, plugin=m.joint is not None
        )

    def rows(self, result: AuditView) -> list[tuple[str, str]]:
        if "n_merged_tuples" in result.summary:  # plug-in units
            return merged_rows(self.name, result)
        if "learned_flags" in result.summary:  # learned log-lift, records in memory
            return learned_rows(result)
        return watchdog_rows(result)

    def mechanism(self, result: AuditView) -> SavedMechanism:
        """The plug-in release's map of tuples, or the learned watchdog's scorer
        (:class:`~privwatch.watchdog.LearnedWatchdogMechanism`, records in memory)."""
        if isinstance(result.method_detail, LearnedRelease):
            return learned_mechanism(result)
        if "n_merged_tuples" not in result.summary:
            return super().mechanism(result)
        return merged_mechanism(self.name, result)

    def mechanism_refusal(self, spec: AuditSpec, route: str) -> str | None:
        """Records in memory only; one learned family saved without pickle only (not
        gradient-boosted trees, not the stack of `auto`): refused before the audit runs."""
        if spec.estimator == "gradient_boosting":
            return (
                "`save_mechanism` saves the learned watchdog's scorer through the checked model "
                "format, which cannot hold gradient-boosted trees without pickle: name another "
                "family, e.g. `estimator`='quadratic_logistic' or 'classifier'."
            )
        if spec.estimator == "auto":
            return (
                "`save_mechanism` saves the learned watchdog's scorer as one model, and "
                "`estimator`='auto' stacks several families: name one, e.g. "
                "`estimator`='quadratic_logistic' or 'classifier'."
            )
        return super().mechanism_refusal(spec, route)


def leakage_of_watchdog(
    wd: Watchdog,
    delta: float | None,
    sensitive: pd.Series,
    log_lift: np.ndarray,
    *,
    plugin: bool,
) -> dict[str, Any]:
    """The watchdog's section of leakage.json on records in memory: (epsilon, delta) on the
    plug-in joint, or (``plugin=False``) record-level scores of a learned estimator, whose
    leakage after release is not measured."""
    reached = wd.guarantee_.breach_probability <= (delta or 0.0) + 1e-12
    leakage: dict[str, Any] = {
        "status": "met" if reached else "not_met",
        "reasons": []
        if reached
        else [
            f"the (epsilon, delta) algorithm reaches a breach probability of "
            f"{wd.guarantee_.breach_probability:.3g}, above the requested delta {delta or 0.0:g}"
        ],
        "guarantee": wd.guarantee_.to_dict(),
        "guarantee_in_words": wd.guarantee_.explain(),
    }
    if plugin:
        leakage["before"] = wd.leakage_before_.to_dict()
        leakage["after"] = wd.leakage_after_.to_dict()
    else:
        codes = pd.Index(wd.sensitive_labels_).get_indexer(sensitive)
        estimate = float(np.mean(log_lift[np.arange(len(codes)), codes]))
        leakage["before"] = {"mutual_information_estimate": estimate}
        leakage["after"] = None
    return stable_leakage(leakage, wd.utility_.to_dict())


def _streamed_leakage(m: Measured, d: Decision) -> dict[str, Any]:
    """The section of leakage.json of records scored while streamed: the guarantee follows
    from the counts the route left in ``d.tally``."""
    t = d.tally
    n = int(t.counts.sum())
    g = flagged_set_guarantee(t.counts, t.flagged, t.kept_risk, d.epsilon, m.basis or "")
    met = g.breach_probability <= 1e-12
    leakage = {
        "status": "met" if met else "not_met",
        "reasons": [] if met else _reasons(g, int(t.flagged.sum()), d.epsilon),
        "alternatives": [] if met else _alternatives(g),
        "guarantee": g.to_dict(),
        "guarantee_in_words": g.explain(),
        "before": {"mutual_information_estimate": t.own_log_lift / n},
    }
    return stable_leakage(leakage, {"flagged_probability": float(t.flagged.sum() / n)})


def _reasons(g: Guarantee, n_flagged: int, epsilon: float) -> list[str]:
    return [
        f"the {n_flagged:,} flagged records, merged into one released value, still "
        f"reveal the sensitive value: their log-lift reaches {g.randomized_epsilon:.3g} "
        f"nats > epsilon {epsilon:g}, for {g.breach_probability:.3g} of the records",
    ]


def _alternatives(g: Guarantee) -> list[dict[str, Any]]:
    """Not checked: the streamed route cannot search a release; the advice is said as such."""
    eps = float(g.randomized_epsilon)
    return [
        {
            "epsilon": eps, "disclosure": "both", "changed": "epsilon",
            "args": {"epsilon": eps}, "information_nats": None, "held_out": None,
            "feasible": False, "unprotected": [], "searched_epsilon": None,
            "description": (
                f"a larger epsilon (at least {eps:.3g} nats; not checked), or "
                "`estimator`='plugin', whose release search generalises and suppresses with an "
                "exact in-sample guarantee and a held-out check"
            ),
        }
    ]  # fmt: skip


def watchdog_rows(result: AuditView) -> list[tuple[str, str]]:
    """The watchdog's figures: threshold, flagged records, the guarantee, the information."""
    g = result.leakage["guarantee"]
    n, s = result.summary["n_records"], result.summary
    estimated = " (estimated)" if result.route == "stream" else ""
    rows = [
        ("records", f"{n:,}"),
        ("epsilon (threshold)", f"{fmt(result.epsilon, 3)} nats"),
        ("flagged records", f"{s['n_flagged']:,} of {n:,}"),
        ("lift-privacy level of the release", f"{fmt(g['effective_epsilon'], 3)} nats{estimated}"),
        ("breach probability (delta)", pct(g["breach_probability"])),
    ]
    before, after = result.leakage["before"], result.leakage["after"]
    if "mutual_information" in before and after:
        rows.append(
            (
                "mutual information before -> after",
                f"{fmt(before['mutual_information'], 3)} -> "
                f"{fmt(after['mutual_information'], 3)} nats",
            )
        )
    if "mutual_information_estimate" in before:
        rows.append(
            (
                "mutual information, estimated",
                f"{fmt(before['mutual_information_estimate'], 3)} nats",
            )
        )
    value = result.leakage["utility"].get("utility_mi")
    if value is not None:
        rows.append(("information kept", f"{fmt(float(value), 3)} nats"))
    return rows
