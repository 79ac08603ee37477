"""The plug-in watchdogs' steps, shared by ``watchdog`` (plug-in units) and ``relaxed``.

The records are counted per observed tuple (:class:`~privwatch.release.merged.TupleUnits`);
:func:`~privwatch.release.merged.merge_to_pass` flags the tuples that break epsilon (and, with
``delta``, exempts some greedily, Sadeghi et al. Alg. 1), merges the rest into ``*`` and walks
its margins up until the held-out verdict is met, by the search's rule
(:mod:`privwatch.release.heldout`). Here that release becomes the audit's :class:`Decision`,
its section of leakage.json, its printed rows and its saved mechanism (a
:class:`~privwatch.release.Generalisation` whose merged tuples are released as ``*``).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from .._numbers import fmt, pct, pct_ci
from ..exceptions import ValidationError
from ..measures import leakage_report
from ..release import SUPPRESSED, Generalisation, as_text, explain_protection
from ..release.merged import MergedRelease, TupleUnits, merge_to_pass
from ._disclosure import mapping_table
from ._leakage import stable_leakage
from ._method import NO_MECHANISM, AuditView, Decision, Measured, SavedMechanism, Step
from ._spec import AuditSpec
from ._steps import watchdog_release

__all__ = ["decide_merged", "merged_leakage", "merged_mechanism", "merged_rows"]

#: Which method released the records, and why, in words (the printed verdict and the report).
WHY = {
    "watchdog": "the privacy watchdog (Hsu et al.): observed tuples whose lift breaks epsilon "
    "merged into '*'",
    "relaxed": "the (epsilon, delta) watchdog (Sadeghi et al. Alg. 1), since `delta` was given: "
    "tuples that break epsilon merged into '*', some exempted while the breach share stays "
    "within delta",
}


#: The same, short (the printed table).
SHORT = {
    "watchdog": "privacy watchdog (Hsu et al.), plug-in tuples",
    "relaxed": "(epsilon, delta) watchdog (Sadeghi et al. Alg. 1): `delta` given",
}


def tolerance_of(spec: AuditSpec) -> float:
    """The tolerated held-out breach share: ``delta`` for the relaxation, else the spec's."""
    return float(spec.delta) if spec.delta is not None else float(spec.held_out_tolerance)


def decide_merged(name: str, spec: AuditSpec, m: Measured, step: Step) -> Decision:
    """The plug-in watchdog's (``delta`` None) or its relaxation's release of the records."""
    if m.probe is None or m.records is None or m.search is None:
        raise ValidationError(f"the {name} method on plug-in counts needs the records in memory.")
    step("flagging the observed tuples, checked on held-out records")
    wd, scores, score_frame, _, _ = watchdog_release(
        m.probe, m.records, m.epsilon, None, spec.epsilon_max
    )
    units = TupleUnits.count(
        m.search.source, m.sensitive_columns, m.observed, spec.folds, spec.seed
    )
    found = merge_to_pass(
        units, m.epsilon, spec.disclosure, tolerance=tolerance_of(spec), delta=spec.delta,
        epsilon_max=spec.epsilon_max, rng=spec.seed,
    )  # fmt: skip
    flags = found.record_flags()
    release = pd.DataFrame(
        {c: as_text(m.records[c]).to_numpy(dtype=object) for c in m.observed},
        index=m.records.index, columns=m.observed,
    )  # fmt: skip
    release.loc[flags, :] = SUPPRESSED
    score_frame["flagged"] = flags
    return Decision(
        name, m.epsilon, m.epsilon_reason, flags=flags, risk=score_frame["risk"].to_numpy(),
        release=release, scores=score_frame, guarantee=_guarantee(spec, found),
        watchdog=wd, log_lift=scores.log_lift, detail=found,
        summary={"n_merged_tuples": int((~found.keep).sum()),
                 "n_observed_tuples": int(found.keep.size)},
    )  # fmt: skip


def _guarantee(spec: AuditSpec, found: MergedRelease) -> dict[str, Any]:
    return {
        "epsilon": found.epsilon,
        "disclosure": found.disclosure,
        "per_value": found.protection,
        "effective_epsilon": found.effective_epsilon,
        "breach_probability": found.breach_in_sample,
        "delta": spec.delta,
        "tolerance": found.tolerance,
        "confidence": found.rung.confidence,
        "exemption_budget": found.rung.budget,
    }


def _words(name: str, m: Measured, found: MergedRelease) -> str:
    rows = [r for r in found.protection if r.get("attribute", m.sensitive) == m.sensitive]
    margin = (
        "on its plug-in lift"
        if found.rung.confidence is None
        else f"on the {found.rung.confidence:.1%} credible bounds of its lift"
    )
    text = (
        f"Released by {WHY[name]}. A tuple is flagged {margin}"
        + (
            f"; exemptions within {found.rung.budget:.1%} of the records"
            if found.rung.budget
            else ""
        )
        + (
            f"; no rung being met, only the tuples the held-out model judges safest, within "
            f"{found.rung.kept_share:.1%} of the records that rung kept, are released"
            if found.rung.kept_share < 1
            else ""
        )
        + f". {explain_protection(rows, m.sensitive, found.epsilon, found.disclosure)}"
    )
    held = found.held
    if held is not None:
        lo, hi = held.breach_probability_ci
        text += (
            f" On records the release was not fitted on, an estimated "
            f"{held.breach_probability:.1%} of the population falls in a released cell that "
            f"breaks epsilon (95 % interval {lo:.1%}-{hi:.1%}; tolerance {found.tolerance:.0%})."
        )
    return text


def _alternatives(spec: AuditSpec, found: MergedRelease) -> list[dict[str, Any]]:
    """When not met: the smallest ``delta`` at which the most protective release tried is met
    (the relaxed ladder at that delta reaches it, and its interval, drawn from the same seed,
    is the same), when there is one."""
    held = found.held
    if found.satisfied or held is None:
        return []
    need = math.ceil(max(held.breach_probability_ci[1], found.breach_in_sample) * 1000) / 1000
    if need >= 1 or found.reasons_at(need):
        return []
    return [
        {
            "epsilon": found.epsilon, "disclosure": found.disclosure, "changed": "delta",
            "args": {"delta": need}, "information_nats": found.information_nats,
            "held_out": {"estimate": held.breach_probability,
                         "interval": list(held.breach_probability_ci)},
            "feasible": True, "unprotected": [], "searched_epsilon": None,
            "description": (
                f"a larger delta: the (epsilon, delta) watchdog at `delta`={need:g}: the "
                f"release tried last is met there ({found.information_nats:.2f} nats kept)"
            ),
        }
    ]  # fmt: skip


def merged_leakage(name: str, spec: AuditSpec, m: Measured, d: Decision) -> dict[str, Any]:
    """The section of leakage.json: the verdict, the guarantee, the held-out check."""
    found: MergedRelease = d.detail
    assert m.joint is not None and m.released_joint is not None and d.release is not None
    assert d.flags is not None
    leakage = {
        "status": "met" if found.satisfied else "not_met",
        "reasons": list(found.reasons),
        "alternatives": _alternatives(spec, found),
        "guarantee": d.guarantee,
        "guarantee_in_words": _words(name, m, found),
        "held_out": None if found.held is None else found.held.to_dict(),
        "before": leakage_report(m.joint).to_dict(),
        "after": leakage_report(m.released_joint(d.release)).to_dict(),
    }
    info, total = found.information_nats, found.information_input_nats
    utility = {
        "utility_mi": info,
        "entropy_observed": total,
        "nmil": 0.0 if total <= 0 else 1.0 - info / total,
        "flagged_probability": m.share(d.flags),
        "information_nats": info,
        "information_input_nats": total,
    }
    return stable_leakage(leakage, utility)


def merged_rows(name: str, result: AuditView) -> list[tuple[str, str]]:
    """The printed figures: the method and why, the flags, the information, the verdict's."""
    g, s = result.leakage["guarantee"], result.summary
    n = int(s["n_records"])
    margin = "plug-in lift" if g["confidence"] is None else f"{g['confidence']:.1%} credible bound"
    rows = [
        ("records", f"{n:,}"),
        ("release method", SHORT[name]),
        ("epsilon (threshold), disclosure", f"{fmt(result.epsilon, 3)} nats, {g['disclosure']}"),
        ("tuples flagged on their", margin),
        ("records merged into '*'", f"{s['n_flagged']:,} of {n:,} ({s['n_merged_tuples']:,} "
                                    f"of {s['n_observed_tuples']:,} observed tuples)"),
        ("information kept, I(X; Y) = H(Y)",
         f"{fmt(result.leakage['utility']['information_nats'], 3)} of "
         f"{fmt(result.leakage['utility']['information_input_nats'], 3)} nats"),
        ("in-sample breach share (records in a cell breaking epsilon)",
         pct(g["breach_probability"])),
    ]  # fmt: skip
    if g["delta"] is not None:
        rows.append(("delta (tolerated breach share)", pct(g["delta"])))
    held = result.leakage["held_out"]
    if held is not None:
        lo, hi = held["breach_probability_ci"]
        rows.append(
            ("held-out breach probability",
             f"{pct(held['breach_probability'], (hi - lo) / 2)} (95 % {pct_ci(lo, hi)}; "
             f"tolerance {pct(g['tolerance'])})"),
        )  # fmt: skip
    return rows


def merged_mechanism(name: str, result: AuditView) -> SavedMechanism:
    """The release as a :class:`~privwatch.release.Generalisation`: every audited tuple, as
    text, to itself or to ``*`` (merged); an unseen tuple goes to ``*`` on apply."""
    if result.data is None or result.release is None:
        raise ValidationError(NO_MECHANISM)
    sensitive = result.settings["sensitive"]
    observed = list(result.settings["observed"])
    table = mapping_table(result.data, result.release, observed)
    return Generalisation(
        observed,
        table[observed].to_numpy(dtype=object).tolist(),
        table[[f"released:{c}" for c in observed]].to_numpy(dtype=object).tolist(),
        sensitive=sensitive if isinstance(sensitive, str) else "+".join(sensitive),
        epsilon=float(result.epsilon),
        disclosure=str(result.leakage["guarantee"]["disclosure"]),
        method=name,
        status=str(result.leakage["status"]),
        bins={k: v for k, v in (result.settings.get("bins") or {}).items() if k in observed},
        input_name=result.stamp.get("input_name"),
        input_sha256=result.stamp.get("input_sha256"),
    )
