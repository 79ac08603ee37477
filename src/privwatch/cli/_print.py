"""What the audit prints: findings first (verdict in colour and words), then the figures.

One printer for the one :class:`~privwatch.audit.Audit`, whichever the route and the release
method: the figures are the method's rows (:meth:`~privwatch.audit.Audit.rows`); library text
is passed through :func:`~privwatch.cli._flags.to_flags`.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ..audit import Audit, jsonable
from ..report import checks_note, fmt, next_steps
from ._checks_lines import attack_lines, classic_line
from ._flags import args_to_flags, to_flags
from ._io import console, err_console

__all__ = ["figures", "print_audit", "summary_json", "verdict"]


def say(text: str) -> None:
    console.print(to_flags(text), highlight=False, soft_wrap=True)


def verdict(satisfied: bool, reasons: list[str], alternatives: list[Any], met: str) -> None:
    """MET (green) or NOT MET (red) with each reason and each feasible alternative."""
    if satisfied:
        console.print(f"[bold green]MET[/]: {met}")
        return
    console.print("[bold red]NOT MET[/]: the release does not meet the requested guarantee.")
    for reason in reasons:
        console.print(f"  [red]- {to_flags(reason)}[/]", highlight=False, soft_wrap=True)
    feasible = [a for a in alternatives if a["feasible"]]
    if feasible:
        console.print("Feasible alternatives, strongest privacy first (each was audited so):")
        for alt in feasible:
            say(f"  - {args_to_flags(alt['args'])}: {alt['description'].split(': ', 1)[-1]}")
    else:
        console.print("[red]No alternative tried is feasible.[/]")
    for alt in alternatives:
        if not alt["feasible"]:
            say(f"  - tried {alt['description']}")


def figures(title: str, rows: list[tuple[str, str]]) -> None:
    """A two-column table of named figures."""
    table = Table(title=title)
    table.add_column("")
    table.add_column("value", justify="right")
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)


def print_audit(result: Audit, proposed: bool) -> None:
    """The verdict first (in colour and words), the next steps, then the figures."""
    for w in result.warnings:
        if w["category"] != "ReleaseNotMetWarning":
            err_console.print(
                f"[yellow]warning:[/] {to_flags(w['message'])}", highlight=False, soft_wrap=True
            )
    found = result.found
    met = "the release meets the requested guarantee."
    if result.route == "stream":
        met = "the release meets epsilon on the estimated log-lift (an estimate, not a proof)."
    verdict(result.satisfied, result.reasons, result.alternatives, met)
    say(result.leakage["guarantee_in_words"])
    if found is not None:
        console.print("[bold]Next steps:[/]")
        for i, step in enumerate(next_steps(result), 1):
            say(f"  {i}. {step}")
    rows = result.rows()
    if result.written is not None:
        rows.append(("release and scores written to", ", ".join(result.written)))
    if "markers" in result.details:
        markers = result.details["markers"]
        rows.append(
            ("flagged records released as", ", ".join(f"{c}={m}" for c, m in markers.items()))
        )
    where = {"memory": "", "engine": f" in {result.engine}", "stream": ", streamed batches"}
    figures(f"privwatch audit{where[result.route]}", rows)
    for line in [classic_line(result), *attack_lines(result), checks_note(result)]:
        if line:
            say(line)
    if result.warnings:
        console.print(
            f"{len(result.warnings)} warning(s) raised during the run: in the report and "
            "leakage.json.",
            highlight=False,
        )
    if proposed:
        say(f"epsilon proposed: {fmt(result.epsilon, 3)} ({result.epsilon_reason}).")


def summary_json(result: Audit, out: str, files: list[str], seconds: float) -> dict[str, Any]:
    """A short machine-readable summary for pipelines (``--json``); details in leakage.json."""
    found = result.found
    held = None if found is None else found.held_out
    attack = (result.leakage["attack"] or {}).get("attributes", {})
    classic = (result.leakage["classic"] or {}).get("release")
    g = result.leakage["guarantee"]
    doc: dict[str, Any] = {
        "status": result.leakage["status"],
        "reasons": [to_flags(r) for r in result.reasons],
        "route": result.route,
        "engine": result.engine,
        "engine_reason": to_flags(result.route_reason),
        "epsilon": result.epsilon,
        "n_records": result.summary["n_records"],
        "n_flagged": result.summary.get("n_flagged"),
        "n_suppressed": result.summary.get("n_suppressed"),
        "held_out_breach_probability": None if held is None else held.breach_probability,
        "effective_epsilon": g.get("effective_epsilon"),
        "breach_probability": g.get("breach_probability"),
        "classic_release_passes": None
        if classic is None
        else {k: v["passes"] for k, v in classic["table"].items()},
        "attack_risk": {k: v["risk"] for k, v in attack.items()},
        "written": result.written,
        "warnings": [to_flags(w["message"]) for w in result.warnings],
        "out": out,
        "files": files,
        "seconds": round(seconds, 2),
    }
    out_doc: dict[str, Any] = jsonable(doc)
    return out_doc
