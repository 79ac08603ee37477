r"""The release method ``randomized``: the flagged tuples through the channel that keeps the most.

The observed tuples whose plug-in log-lift breaks epsilon (two-sided, or above epsilon with
``disclosure`` ``"positive"``) are released through a channel :math:`k[x, y]` over the flagged
tuples and ``*``, chosen by an LP (:func:`privwatch.mechanisms.lift_channel`: every released
symbol's lift within the box, the probability that a flagged record is released as itself
maximised); every other tuple is released as it is. It is aimed at the held-out verdict with
margins (:func:`privwatch.release.randomized.randomize_release`) and judged like the search:
the population share in a released symbol that breaks epsilon, with its 95 % interval
(:func:`privwatch.release.heldout.estimate_channel_breach`), MET iff its upper end is within the
tolerance. Information kept: :math:`I(X; Y)` in nats, beside the merge of the same flagged set
into ``*`` (the X-invariant randomization of Sadeghi et al.). Its mechanism is the channel
(:class:`privwatch.release.randomized.RandomizedMechanism`), which ``privwatch apply`` draws
from with a seed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._numbers import fmt, pct, pct_ci
from ..exceptions import ValidationError
from ..measures import leakage_report
from ..release import explain_protection
from ..release.randomized import RandomizedMechanism, RandomizedRelease, randomize_release
from ._leakage import stable_leakage
from ._method import AuditView, Decision, Measured, ReleaseMethod, SavedMechanism, Step
from ._spec import AuditSpec

__all__ = ["RandomizedMethod"]


class RandomizedMethod(ReleaseMethod):
    """The LP randomization of the flagged set (see the module docstring)."""

    name: ClassVar[str] = "randomized"
    title: ClassVar[str] = "randomized flagged set"
    routes: ClassVar[tuple[str, ...]] = ("memory",)

    def decide(self, spec: AuditSpec, measured: Measured, step: Step) -> Decision:
        m = measured
        if m.records is None or m.joint is None:
            raise ValidationError(
                f"the {self.title} needs plug-in counts of records in memory; got none."
            )
        step("solving the randomization of the flagged set")
        done = randomize_release(
            m.records, m.sensitive_columns if len(m.sensitive_columns) > 1 else m.sensitive,
            m.observed, m.epsilon, disclosure=spec.disclosure, folds=spec.folds,
            seed=spec.seed if isinstance(spec.seed, int) else 0,
            tolerance=spec.held_out_tolerance,
        )  # fmt: skip
        flags = np.isin(done.record_tuple, done.channel.flagged)
        symbols_differ = (done.released.to_numpy() != _own(done)).any(axis=1)
        risk = _risk(done)
        scores = pd.DataFrame(
            {"risk": risk, "flagged": flags, "randomized": symbols_differ},
            index=m.records.index,
        )
        guarantee = {
            "epsilon": done.epsilon,
            "disclosure": done.disclosure,
            "per_value": done.per_value,
            "max_log_lift_in_sample": done.channel.worst_log_lift,
            "solved_at_epsilon": done.channel.epsilon,
            "scope": "released symbols of the channel, on the audited records (exact)",
        }
        return Decision(
            self.name,
            done.epsilon,
            m.epsilon_reason,
            flags=flags,
            risk=risk,
            release=done.released,
            scores=scores,
            guarantee=guarantee,
            summary={"n_randomized": done.altered_records},
            detail=done,
        )  # fmt: skip

    def leakage(self, spec: AuditSpec, measured: Measured, decision: Decision) -> dict[str, Any]:
        done: RandomizedRelease = decision.detail
        m = measured
        assert m.joint is not None
        held = done.held_out
        leakage: dict[str, Any] = {
            "status": "met" if done.satisfied else "not_met",
            "reasons": done.reasons,
            "guarantee": decision.guarantee,
            "guarantee_in_words": _in_words(done, m.sensitive),
            "release": {
                "method": "randomized",
                "generalisation": {c: 0 for c in done.observed},
                "suppressed_records": int((done.released == "*").all(axis=1).sum()),
                "n_records": done.n_records,
                "perturbed_records": done.altered_records,
                **{k: v for k, v in done.summary().items() if k not in ("verdict", "met")},
            },
            "held_out": None if held is None else {**held.to_dict(), "verdict": done.verdict},
            "before": leakage_report(m.joint).to_dict(),
            "after": None,
        }
        utility = {
            "utility_mi": done.information_nats,
            "entropy_observed": done.information_input_nats,
            "nmil": 1.0 - done.information_nats / max(done.information_input_nats, 1e-300),
            "flagged_probability": done.flagged_records / max(done.n_records, 1),
            "information_nats": done.information_nats,
            "information_input_nats": done.information_input_nats,
        }
        return stable_leakage(leakage, utility)

    def rows(self, result: AuditView) -> list[tuple[str, str]]:
        rel = result.leakage.get("release") or {}
        n = int(result.summary["n_records"])
        rows = [
            ("records", f"{n:,}"),
            ("epsilon, disclosure",
             f"{fmt(result.epsilon, 3)} nats, {rel.get('disclosure', '-')}"),
            ("release", "flagged tuples randomized (LP channel), the others as they are"),
            ("information kept, I(X; Y)",
             f"{fmt(rel.get('information_nats'), 3)} of "
             f"{fmt(rel.get('information_input_nats'), 3)} nats"),
            ("merging the flagged set into '*' instead",
             "breaks epsilon" if rel.get("merge_information_nats") is None
             else f"{fmt(rel['merge_information_nats'], 3)} nats"),
            ("records flagged, released as another symbol",
             f"{rel.get('flagged_records', 0):,}, {rel.get('altered_records', 0):,} of {n:,}"),
            ("worst log-lift, in-sample", f"{fmt(rel.get('worst_log_lift_in_sample'), 3)} nats"),
        ]  # fmt: skip
        held = result.leakage.get("held_out")
        if held:
            lo, hi = held["breach_probability_ci"]
            rows.append(
                ("held-out breach probability",
                 f"{pct(held['breach_probability'], (hi - lo) / 2)} (95 % {pct_ci(lo, hi)})"),
            )  # fmt: skip
        return rows

    def mechanism(self, result: AuditView) -> SavedMechanism:
        """The channel the audit released through
        (:class:`~privwatch.release.randomized.RandomizedMechanism`), kept by the audit."""
        done = result.method_detail
        if not isinstance(done, RandomizedRelease):
            raise ValidationError(
                "`save_mechanism` needs the audit's randomized release; got none."
            )
        s = result.settings
        return RandomizedMechanism.from_release(
            done,
            bins=s.get("bins"),
            input_name=result.stamp.get("input_name"),
            input_sha256=result.stamp.get("input_sha256"),
        )


def _own(done: RandomizedRelease) -> np.ndarray:
    """Each record's own tuple as text (the released columns' order)."""
    return np.asarray(done.tuples.iloc[done.record_tuple].to_numpy())


def _risk(done: RandomizedRelease) -> np.ndarray:
    """Each record's plug-in risk: its tuple's worst |log-lift| (log-lift one-sided)."""
    total = done.table.total()
    joint = total.T / total.sum()
    ps, px = joint.sum(1), joint.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = np.log(joint / px) - np.log(ps)[:, None]
    lift = np.abs(lift) if done.disclosure == "both" else lift
    worst = np.nanmax(np.where(np.isnan(lift), -np.inf, lift), axis=0)
    return np.asarray(worst[done.record_tuple], dtype=float)


def _in_words(done: RandomizedRelease, name: str) -> str:
    rows = [r for r in done.per_value if r.get("attribute", name) == name] or done.per_value
    text = explain_protection(rows, name, done.epsilon, done.disclosure)
    text += (
        " Records of the flagged tuples are released at random among those tuples and '*', "
        "through a channel every released symbol of which meets epsilon exactly on the audited "
        "records; "
    )
    held = done.held_out
    if held is None:
        return text + "it was not checked on held-out records."
    lo, hi = held.breach_probability_ci
    return text + (
        f"for the population, an estimated {held.breach_probability:.1%} (95 % interval "
        f"{lo:.1%}-{hi:.1%}) fall in a released symbol that breaks it."
    )
