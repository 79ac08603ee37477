"""What the audit prints: findings first (verdict in colour and words), then the figures."""

from __future__ import annotations

import math
from typing import Any

from rich.table import Table

from ..report import AuditResult, NeuralSourceAudit, SourceAudit, fmt, next_steps, pct, pct_ci
from ._io import console

__all__ = ["print_release", "print_source", "print_watchdog", "summary_json"]


def _classic_line(result: AuditResult) -> str | None:
    classic = result.leakage.get("classic")
    if not classic:
        return None
    rel = classic["release"]
    t = rel["table"]
    parts = [
        f"k-anonymity {t['k_anonymity']['value']} (threshold {t['k_anonymity']['threshold']}: "
        f"{'pass' if t['k_anonymity']['passes'] else 'fail'})"
    ]
    for attr, block in rel["sensitive"].items():
        m = block["measures"]
        parts.append(
            f"{attr}: distinct l-diversity {m['distinct_l_diversity']['value']}, t-closeness "
            f"{fmt(float(m['t_closeness']['value']), 2)}"
        )
    fails = sum(not e["passes"] for e in t.values()) + sum(
        not e["passes"] for b in rel["sensitive"].values() for e in b["measures"].values()
    )
    total = len(t) + sum(len(b["measures"]) for b in rel["sensitive"].values())
    return f"Classic measures of the release: {'; '.join(parts)}; {total - fails} of {total} pass."


def _attack_line(result: AuditResult) -> list[str]:
    attack = result.leakage.get("attack")
    if not attack:
        return []
    lines = []
    for attr, a in attack["attributes"].items():
        lo, hi = a["risk_ci"]
        verdict = "pass" if a["passes"] else "fail"
        lines.append(
            f"Inference attack on {attr}: right for {pct(a['success_targets'])} of released "
            f"records vs {pct(a['success_control'])} of held-out ones; risk "
            f"{fmt(float(a['risk']), 2)} (95 % {fmt(float(lo), 2)} to {fmt(float(hi), 2)}, "
            f"threshold {fmt(float(a['threshold']), 2)}: {verdict}); best possible attacker "
            f"{pct(a['bayes_success'])} vs {pct(a['prior_success'])} without the release."
        )
    return lines


def print_release(result: AuditResult, proposed: bool) -> None:
    """The verdict first (in colour and words), the next steps, then the release's figures."""
    found = result.found
    assert found is not None
    n = found.n_records
    if found.satisfied:
        console.print("[bold green]MET[/]: the release meets the requested guarantee.")
    else:
        console.print("[bold red]NOT MET[/]: the release does not meet the requested guarantee.")
        for reason in found.reasons:
            console.print(f"  [red]- {reason}[/]", highlight=False, soft_wrap=True)
        if found.alternatives:
            console.print("Nearest feasible alternatives:")
            for alt in found.alternatives:
                console.print(f"  - {alt}", highlight=False, soft_wrap=True)
    console.print(result.leakage["guarantee_in_words"], soft_wrap=True, highlight=False)
    console.print("[bold]Next steps, cheapest first:[/]")
    for i, step in enumerate(next_steps(result), 1):
        console.print(f"  {i}. {step}", highlight=False, soft_wrap=True)
    table = Table(title="privwatch audit")
    table.add_column("")
    table.add_column("value", justify="right")
    held = found.held_out
    rows = [
        ("records", f"{n:,}"),
        ("epsilon, disclosure", f"{fmt(found.epsilon, 3)} nats, {found.disclosure}"),
        ("release", f"{found.method} recoding"),
        (
            "information kept",
            f"{found.information_nats:.2f} of {found.information_input_nats:.2f} nats",
        ),
        ("records suppressed", f"{found.suppressed_records:,} of {n:,}"),
        ("worst log-lift, in-sample", f"{fmt(found.max_log_lift, 3)} nats (exact)"),
    ]
    if held is not None:
        lo, hi = held.breach_probability_ci
        rows.append(
            (
                "held-out breach probability",
                f"{pct(held.breach_probability, (hi - lo) / 2)} (95 % {pct_ci(lo, hi)})",
            )
        )
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)
    for line in [_classic_line(result), *_attack_line(result)]:
        if line:
            console.print(line, highlight=False, soft_wrap=True)
    if result.warnings:
        console.print(
            f"{len(result.warnings)} warning(s) raised during the run: in the report and "
            "leakage.json.",
            highlight=False,
        )
    if proposed:
        console.print(
            f"epsilon proposed: {fmt(result.epsilon, 3)} ({result.epsilon_reason}).",
            soft_wrap=True,
        )


def print_watchdog(result: AuditResult, proposed: bool) -> None:
    """The watchdog route (learned estimators, or --delta): its table and guarantee."""
    g = result.watchdog.guarantee_
    if result.satisfied:
        console.print("[bold green]MET[/]: the release meets the requested guarantee.")
    else:
        console.print("[bold red]NOT MET[/]: the release does not meet the requested guarantee.")
    table = Table(title="privwatch audit")
    table.add_column("")
    table.add_column("value", justify="right")
    rows = [
        ("records", f"{result.summary['n_records']:,}"),
        ("epsilon (threshold)", f"{fmt(result.epsilon, 3)} nats"),
        ("flagged records", f"{result.summary['n_flagged']:,} of {result.summary['n_records']:,}"),
        ("lift-privacy level of the release", f"{fmt(g.effective_epsilon, 3)} nats"),
        ("breach probability (delta)", pct(g.breach_probability)),
    ]
    before = result.leakage["before"]
    if "mutual_information" in before:
        rows.append(
            (
                "mutual information before -> after",
                f"{fmt(before['mutual_information'], 3)} -> "
                f"{fmt(result.leakage['after']['mutual_information'], 3)} nats",
            )
        )
    utility = result.leakage["utility"]
    value = utility.get("utility_mi")
    if value is not None:
        rows.append(("information kept", f"{fmt(float(value), 3)} nats"))
    for name, val in rows:
        table.add_row(name, val)
    console.print(table)
    line = _classic_line(result)
    if line:
        console.print(line, highlight=False, soft_wrap=True)
    if proposed:
        console.print(
            f"epsilon proposed: {fmt(result.epsilon, 3)} ({result.epsilon_reason}).",
            soft_wrap=True,
        )
    console.print(g.explain(), soft_wrap=True)


def summary_json(
    result: AuditResult | SourceAudit | NeuralSourceAudit,
    out: str,
    files: list[str],
    seconds: float,
) -> dict[str, Any]:
    """A short machine-readable summary for pipelines (``--json``); details in leakage.json."""
    if isinstance(result, SourceAudit):
        return _source_json(result, out, files, seconds)
    if isinstance(result, NeuralSourceAudit):
        return _neural_json(result, out, files, seconds)
    found = result.found
    held = None if found is None or found.held_out is None else found.held_out
    attack = (result.leakage["attack"] or {}).get("attributes", {})
    classic = (result.leakage["classic"] or {}).get("release")
    doc: dict[str, Any] = {
        "status": result.leakage.get("status", "met"),
        "reasons": result.leakage.get("reasons", []),
        "epsilon": result.epsilon,
        "n_records": result.summary["n_records"],
        "n_suppressed": result.summary.get("n_suppressed"),
        "held_out_breach_probability": None if held is None else held.breach_probability,
        "classic_release_passes": None
        if classic is None
        else {k: v["passes"] for k, v in classic["table"].items()},
        "attack_risk": {k: v["risk"] for k, v in attack.items()},
        "warnings": [w["message"] for w in result.warnings],
        "out": out,
        "files": files,
        "seconds": round(seconds, 2),
    }
    return _finite(doc)


def _finite(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with non-finite floats as text (JSON has no inf or NaN)."""
    return {
        k: (v if not isinstance(v, float) or math.isfinite(v) else str(v)) for k, v in doc.items()
    }


def _source_json(result: SourceAudit, out: str, files: list[str], seconds: float) -> dict[str, Any]:
    found = result.release
    held = found.held_out
    doc: dict[str, Any] = {
        "status": "met" if found.satisfied else "not_met",
        "reasons": found.reasons,
        "epsilon": result.epsilon,
        "n_records": result.n_records,
        "n_suppressed": found.suppressed_records,
        "held_out_breach_probability": None if held is None else held.breach_probability,
        "written": result.written,
        "warnings": [w["message"] for w in result.warnings],
        "out": out,
        "files": files,
        "seconds": round(seconds, 2),
    }
    return _finite(doc)


def _neural_json(
    result: NeuralSourceAudit, out: str, files: list[str], seconds: float
) -> dict[str, Any]:
    g = result.guarantee
    doc: dict[str, Any] = {
        "status": "met" if result.satisfied else "not_met",
        "reasons": result.reasons,
        "epsilon": result.epsilon,
        "estimator": result.estimator,
        "n_records": result.n_records,
        "n_flagged": result.n_flagged,
        "effective_epsilon": g.effective_epsilon,
        "breach_probability": g.breach_probability,
        "written": result.written,
    }
    doc.update(out=out, files=files, seconds=round(seconds, 2))
    return _finite(doc)


def verdict(
    satisfied: bool,
    reasons: list[str],
    alternatives: list[str],
    met: str = "the release meets the requested guarantee.",
) -> None:
    """MET (green) or NOT MET (red) with each reason and each feasible alternative."""
    if satisfied:
        console.print(f"[bold green]MET[/]: {met}")
        return
    console.print("[bold red]NOT MET[/]: the release does not meet the requested guarantee.")
    for reason in reasons:
        console.print(f"  [red]- {reason}[/]", highlight=False, soft_wrap=True)
    for alt in alternatives:
        console.print(f"  - alternative: {alt}", highlight=False, soft_wrap=True)


def figures(title: str, rows: list[tuple[str, str]]) -> None:
    """A two-column table of named figures."""
    table = Table(title=title)
    table.add_column("")
    table.add_column("value", justify="right")
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)


def print_neural_source(result: NeuralSourceAudit) -> None:
    """The verdict and the figures of a learned estimator's audit of a streamed source."""
    g = result.guarantee
    verdict(
        result.satisfied,
        result.reasons,
        result.alternatives,
        "the release meets epsilon on the estimated log-lift (an estimate, not a proof).",
    )
    rows = [
        ("records", f"{result.n_records:,}"),
        ("scoring", f"cross-fitted, {result.folds} folds"),
        ("epsilon (threshold)", f"{fmt(result.epsilon, 3)} nats"),
        ("flagged records", f"{result.n_flagged:,} of {result.n_records:,}"),
        ("lift-privacy level of the release", f"{fmt(g.effective_epsilon, 3)} nats (estimated)"),
        ("breach probability (delta)", pct(g.breach_probability)),
        ("mutual information, estimated", f"{fmt(result.mutual_information_estimate, 3)} nats"),
        ("scores and release written to", result.written),
        ("flagged records released as", ", ".join(f"{c}={m}" for c, m in result.markers.items())),
    ]
    figures(f"privwatch audit, {result.estimator} estimator on streamed batches", rows)
    console.print(g.explain(), soft_wrap=True, highlight=False)


def print_source(result: SourceAudit, proposed: bool) -> None:
    """The verdict and the figures of an audit run in an engine (no per-record report)."""
    found = result.release
    n = result.n_records
    verdict(found.satisfied, found.reasons, found.alternatives)
    rows = [
        ("records", f"{n:,}"),
        ("observed tuples", f"{result.n_tuples:,}"),
        ("epsilon, disclosure", f"{fmt(found.epsilon, 3)} nats, {found.disclosure}"),
        ("release", f"{found.method} recoding"),
        (
            "information kept",
            f"{found.information_nats:.2f} of {found.information_input_nats:.2f} nats",
        ),
        ("records suppressed", f"{found.suppressed_records:,} of {n:,}"),
        ("worst log-lift, in-sample", f"{fmt(found.max_log_lift, 3)} nats (exact)"),
    ]
    if found.held_out is not None:
        lo, hi = found.held_out.breach_probability_ci
        rows.append(
            (
                "held-out breach probability",
                f"{pct(found.held_out.breach_probability, (hi - lo) / 2)} (95 % {pct_ci(lo, hi)})",
            )
        )
    rows.append(("scores and release written to", result.written or "nowhere"))
    figures(f"privwatch audit in {result.engine}", rows)
    console.print(
        "The classic measures, the inference attack and the HTML report need the records in "
        "memory; they are not computed when auditing in an engine.",
        highlight=False,
        soft_wrap=True,
    )
    if proposed:
        console.print(
            f"epsilon proposed: {fmt(result.epsilon, 3)} ({result.epsilon_reason}).",
            soft_wrap=True,
        )
