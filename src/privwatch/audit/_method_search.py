"""The release method ``search``: the most informative generalisation that meets lift privacy.

:func:`privwatch.release.find_release` with the audit's settings, on the records (memory) or
on the count table (engine): global or local recoding of the observed columns through their
hierarchies, cells that break epsilon suppressed to ``*`` within ``max_suppressed``, the
in-sample guarantee exact and the held-out check of the verdict. With no epsilon given, the
smallest epsilon whose release is met and keeps most of the information
(:func:`~privwatch.audit._steps.search_release`). Its mechanism is the fitted
:class:`~privwatch.release.Generalisation`, saved for ``privwatch apply``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .._numbers import fmt, pct, pct_ci
from ..exceptions import ValidationError
from ..measures import leakage_report
from ..release import Generalisation, ReleaseResult
from ..release.search import suppression_mechanism
from ._disclosure import attack_section, mapping_table
from ._leakage import explain_release, stable_leakage
from ._method import (
    NO_MECHANISM,
    AuditView,
    Decision,
    Measured,
    ReleaseMethod,
    SavedMechanism,
    Step,
)
from ._spec import AuditSpec
from ._steps import adopt_search, search_release, watchdog_release

__all__ = ["SearchMethod", "search_rows"]


def search_rows(found: ReleaseResult, n: int) -> list[tuple[str, str]]:
    """The figures of a searched (or checked) release of ``n`` records, as printed."""
    rows = [
        ("records", f"{n:,}"),
        ("epsilon, disclosure", f"{fmt(found.epsilon, 3)} nats, {found.disclosure}"),
        ("release", f"{found.method} recoding"),
        (
            "information kept",
            f"{found.information_nats:.2f} of {found.information_input_nats:.2f} nats",
        ),
        ("records suppressed", f"{found.suppressed_records:,} of {n:,}"),
        *_suppression_rows(found),
        ("unique records (k = 1)", f"{found.unique_records:,} of {n:,}"),
        ("worst log-lift, in-sample", f"{fmt(found.max_log_lift, 3)} nats (exact)"),
    ]
    held = found.held_out
    if held is not None:
        lo, hi = held.breach_probability_ci
        rows.append(
            (
                "held-out breach probability",
                f"{pct(held.breach_probability, (hi - lo) / 2)} (95 % {pct_ci(lo, hi)})",
            )
        )
    return rows


def _suppression_rows(found: ReleaseResult) -> list[tuple[str, str]]:
    """With ``suppression`` ``randomize``: what became of the suppressed cells, and why."""
    sc = found.suppression
    if sc is None:
        return []
    if not sc.randomized:
        return [("suppressed cells", f"'*' kept: {sc.why}")]
    return [
        ("suppressed cells", f"randomized (LP channel at {sc.share:g} x epsilon): {sc.why}"),
        ("records drawn as another symbol", f"{sc.altered_records:,} of "
         f"{sc.randomized_records:,} in suppressed cells (I(X; Y) "
         f"{sc.information_nats:.2f} nats; with '*': {sc.star_information_nats:.2f})"),
    ]  # fmt: skip


class SearchMethod(ReleaseMethod):
    """The generalisation search (see the module docstring)."""

    name: ClassVar[str] = "search"
    title: ClassVar[str] = "generalisation search"
    routes: ClassVar[tuple[str, ...]] = ("memory", "engine")

    def decide(self, spec: AuditSpec, measured: Measured, step: Step) -> Decision:
        m = measured
        if m.search is None:
            raise ValidationError(f"the {self.title} needs plug-in counts; got none to search.")
        if spec.suppression == "randomize" and m.records is None:
            raise ValidationError(
                "`suppression`='randomize' draws each record's release through a channel: it "
                "needs the records in memory (not a count table or a database engine)."
            )
        wd = scores = score_frame = None
        if m.probe is not None and m.records is not None:  # records in memory: their scores
            step("fitting the watchdog and releasing")
            wd, scores, score_frame, _, _ = watchdog_release(
                m.probe, m.records, m.epsilon, spec.delta, spec.epsilon_max
            )
        step("searching the most informative release")
        found, epsilon, reason = search_release(
            m.search, m.epsilon, m.epsilon_reason, spec.epsilon is None
        )
        if m.records is not None and score_frame is not None:
            release, score_frame, flags = adopt_search(found, m.records, m.observed, score_frame)
            risk = score_frame["risk"].to_numpy()
        else:  # a count table: one unit per row
            release = found.released
            flags = found.records["flagged"].to_numpy(dtype=bool)
            risk = found.records["risk"].to_numpy(dtype=np.float64)
        return Decision(
            self.name, float(epsilon), reason, flags=flags, risk=risk, release=release,
            scores=score_frame, mapping=found.mapping, guarantee=found.to_dict()["guarantee"],
            found=found, watchdog=wd, log_lift=None if scores is None else scores.log_lift,
            summary={"n_suppressed": found.suppressed_records},
        )  # fmt: skip

    def leakage(self, spec: AuditSpec, measured: Measured, decision: Decision) -> dict[str, Any]:
        """The release's guarantee, held-out check, frontier, and the exact leakage of the
        observed columns (before) and of the released cells (after)."""
        found, m = decision.found, measured
        assert found is not None and m.joint is not None and m.released_joint is not None
        assert decision.release is not None
        leakage = found.to_dict()
        leakage["guarantee_in_words"] = explain_release(found, m.sensitive)
        leakage["before"] = leakage_report(m.joint).to_dict()
        leakage["after"] = leakage_report(m.released_joint(decision.release)).to_dict()
        utility = {
            "information_nats": found.information_nats,
            "information_input_nats": found.information_input_nats,
            "flagged_probability": m.share(found.records["flagged"].to_numpy(dtype=bool)),
        }
        return stable_leakage(leakage, utility)

    def rows(self, result: AuditView) -> list[tuple[str, str]]:
        found = result.found
        return [] if found is None else search_rows(found, int(result.summary["n_records"]))

    def report_rows(self, result: AuditView) -> list[tuple[str, str]]:
        found = result.found
        if found is None:
            return []
        n = found.n_records
        sides = "two-sided" if found.disclosure == "both" else "positive only"
        rows = [
            ("release", f"{found.method} recoding, lift privacy {sides} at epsilon = "
                        f"{fmt(found.epsilon, 3)} nats"),
            ("information kept", f"{fmt(found.information_nats, 3)} of "
             f"{fmt(found.information_input_nats, 3)} nats (global recoding alone: "
             f"{fmt(found.information_global_nats, 3)}; local: "
             f"{fmt(found.information_local_nats, 3)})"),
            ("records suppressed", f"{found.suppressed_records:,} of {n:,}"),
            ("unique records (alone in their released cell, k = 1)",
             f"{found.unique_records:,} of {n:,}"),
            ("worst log-lift of a released cell (in-sample, exact)",
             f"{fmt(found.max_log_lift, 3)} nats"),
        ]  # fmt: skip
        held = found.held_out
        if held is not None:
            lo, hi = held.breach_probability_ci
            plugin = pct(held.breach_probability_plugin)
            rows.append(
                ("held-out breach probability",
                 f"{pct(held.breach_probability, (hi - lo) / 2)} (95 %: {pct_ci(lo, hi)}"
                 + ("" if plugin == "-" else f"; plug-in {plugin}") + ")"),
            )  # fmt: skip
        return rows

    def mechanism(self, result: AuditView) -> SavedMechanism:
        """The fitted :class:`~privwatch.release.Generalisation`: every audited tuple, as text,
        and its released tuple (from the records in memory, or on the engine route from the
        search's mapping: one row per observed tuple of the count table)."""
        found = result.found
        engine = result.route == "engine"
        if found is None or (result.data is None and not engine) or found.method == "external":
            raise ValidationError(NO_MECHANISM)
        sensitive = result.settings["sensitive"]  # a list when several are scored jointly
        observed = list(result.settings["observed"])
        if found.suppression is not None and found.suppression.randomized:
            return suppression_mechanism(
                found.suppression,
                sensitive=sensitive if isinstance(sensitive, str) else "+".join(sensitive),
                status="met" if found.satisfied else "not_met",
                bins=result.settings.get("bins"),
                input_name=result.stamp.get("input_name"),
                input_sha256=result.stamp.get("input_sha256"),
            )
        return Generalisation.from_release(
            found,
            sensitive=sensitive if isinstance(sensitive, str) else "+".join(sensitive),
            observed=observed,
            bins=result.settings.get("bins"),
            table=None
            if result.data is None
            else mapping_table(result.data, found.released, observed),
            input_name=result.stamp.get("input_name"),
            input_sha256=result.stamp.get("input_sha256"),
        )

    def mechanism_refusal(self, spec: AuditSpec, route: str) -> str | None:
        """None on the in-memory and engine routes (the engine route saves the mapping it
        labels the records with); the default refusal elsewhere."""
        return None if route == "engine" else super().mechanism_refusal(spec, route)

    def attack(
        self, spec: AuditSpec, measured: Measured, decision: Decision, step: Step
    ) -> dict[str, Any] | None:
        """The inference attack on the release, searched again on half of the records."""
        search, found = measured.search, decision.found
        if search is None or found is None:
            return None
        step("attacking the release (inference with a control set)")
        eps = decision.epsilon
        return attack_section(
            search.source, found, measured.sensitive_columns, measured.observed,
            lambda part: search(eps, final=False, data=part), rng=spec.seed,
        )  # fmt: skip
