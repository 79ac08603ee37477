"""``privwatch check``: judge a release another tool made; parse, call, write, print.

No decision is made here: the verdict is :func:`privwatch.check.check`'s, the files
:func:`privwatch.report.write_audit`'s. Exit status 0 (met), 3 (not met), 2 (an error; nothing
is left in an output folder the command created).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from ..audit import Audit, Caller, search_rows
from ..check import check
from ..release.heldout import FOLDS, TOLERANCE
from ..report import check_writable, checks_note, fmt, pct, write_audit
from ._audit_options import Opt
from ._checks_lines import classic_line
from ._flags import command_line, to_flags
from ._io import console, writes_or_leaves_nothing
from ._print import figures, say, summary_json

__all__ = ["check_command"]

Key = Annotated[
    str | None,
    typer.Option(
        help="Align by this column: one of both tables (a unique record id), or one of the "
        "release holding each record's 0-based row number in ORIGINAL. Records the release "
        "does not list count as suppressed."
    ),
]
Synthetic = Annotated[
    bool, typer.Option("--synthetic", help="RELEASE is a synthetic table (no row alignment).")
]
Control = Annotated[
    Path | None,
    typer.Option(help="With --synthetic: records the generator never saw (the attack's control)."),
]
Mechanism = Annotated[
    Path | None,
    typer.Option(
        help="The saved mechanism RELEASE was drawn from (--save-mechanism: a randomized "
        "channel, or a generalisation): RELEASE must be consistent with it, and the channel is "
        "judged, not the draw. --sensitive, --epsilon and --disclosure default to its own."
    ),
]


def _verdict(result: Audit, met: str) -> None:
    if result.satisfied:
        console.print(f"[bold green]MET[/]: {met}")
        return
    console.print("[bold red]NOT MET[/]: the release does not meet the requested guarantee.")
    for reason in result.reasons:
        console.print(f"  [red]- {to_flags(reason)}[/]", highlight=False, soft_wrap=True)


def _print_synthetic(result: Audit) -> None:
    _verdict(result, "no leak beyond the control was found.")
    say(result.leakage["guarantee_in_words"])
    fig = result.details["check"]
    rows = [
        ("original records", f"{result.summary['n_records']:,}"),
        ("synthetic records", f"{result.summary['n_synthetic']:,}"),
        ("copied verbatim", pct(fig["verbatim_share"])),
    ]
    if fig["verbatim_share_control"] is not None:
        rows.append(("control records found verbatim", pct(fig["verbatim_share_control"])))
    for s, lift in fig["attributes"].items():
        rows.append(
            (f"worst log-lift of a synthetic cell on {s}",
             f"{fmt(lift['max_log_lift_on_original'], 3)} nats"),
        )  # fmt: skip
    for s, a in ((result.leakage["attack"] or {}).get("attributes") or {}).items():
        lo, hi = a["risk_ci"]
        rows.append((f"inference risk on {s}", f"{pct(a['risk'])} (95 % {pct(lo)}-{pct(hi)})"))
    figures("privwatch check --synthetic", rows)


def _print_aligned(result: Audit, proposed: bool) -> None:
    found = result.found
    assert found is not None
    _verdict(result, "the release meets the requested guarantee.")
    say(result.leakage["guarantee_in_words"])
    c = result.details["check"]
    rows = search_rows(found, found.n_records)
    rows.insert(3, ("released cells", f"{c['cells']:,}"))
    rows.append(("records not listed in the release", f"{c['records_not_listed']:,}"))
    rows.append(
        ("records perturbed", f"{c['perturbed_records']:,} ({pct(c['perturbed_share'])}): "
         + ", ".join(f"{k} {v:,}" for k, v in c["perturbed_by_column"].items())),
    )  # fmt: skip
    figures("privwatch check", rows)
    for line in [classic_line(result), checks_note(result)]:
        if line:
            say(line)
    if proposed:
        say(f"epsilon: {fmt(result.epsilon, 4)} ({result.epsilon_reason}).")


def _print_mechanism(result: Audit) -> None:
    _verdict(result, "the channel meets the requested guarantee.")
    say(result.leakage["guarantee_in_words"])
    c = result.details["check"]
    rows = result.rows()
    rows.insert(1, ("mechanism", f"{c['mechanism_name']} ({c['mechanism_kind']}); the release "
                    f"is consistent with it ({c['consistent_records']:,} records)"))  # fmt: skip
    figures("privwatch check --mechanism", rows)
    for line in [classic_line(result), checks_note(result)]:
        if line:
            say(line)


def check_command(
    ctx: typer.Context,
    original: Annotated[Path, typer.Argument(help="The original table the release was made from.")],
    release: Annotated[Path, typer.Argument(help="The release (or synthetic table) to check.")],
    sensitive: Opt.sensitive = None,
    observed: Opt.observed = None,
    key: Key = None,
    synthetic: Synthetic = False,
    control: Control = None,
    mechanism: Mechanism = None,
    epsilon: Opt.epsilon = None,
    disclosure: Opt.disclosure = "both",
    folds: Opt.folds = FOLDS,
    held_out_tolerance: Opt.held_out_tolerance = TOLERANCE,
    checks: Opt.checks = True,
    sampling_fraction: Opt.sampling_fraction = None,
    weights: Opt.weights = None,
    population: Opt.population = None,
    cluster_id: Opt.cluster_id = None,
    risk_threshold: Opt.risk_threshold = 0.09,
    seed: Opt.seed = 0,
    sep: Opt.sep = ",",
    encoding: Opt.encoding = "utf-8",
    out: Opt.out = Path("privwatch-check"),
    overwrite: Opt.overwrite = False,
    quiet: Opt.quiet = False,
    as_json: Opt.as_json = False,
) -> None:
    """Check a release made elsewhere (generalised, suppressed, perturbed or synthetic)."""
    t0 = time.perf_counter()
    options: dict[str, Any] = dict(
        sensitive=sensitive, observed=observed, epsilon=epsilon, disclosure=disclosure,
        folds=folds, held_out_tolerance=held_out_tolerance, checks=checks, seed=seed,
        sep=sep, encoding=encoding, sampling_fraction=sampling_fraction, weights=weights,
        population=population, cluster_id=cluster_id, risk_threshold=risk_threshold,
    )  # fmt: skip
    source = ctx.get_parameter_source("disclosure")
    if mechanism is not None and getattr(source, "name", None) == "DEFAULT":
        del options["disclosure"]  # the mechanism's
    with writes_or_leaves_nothing(out):
        check_writable(out, overwrite)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = check(original, release, key=key, synthetic=synthetic,
                           control=control, mechanism=mechanism, **options)  # fmt: skip
        command = command_line("check", ctx.command.params, ctx.params)
        result.caller = Caller(command, to_flags, "command line")  # the report speaks flags
        written = write_audit(result, out, overwrite=True)
    seconds = time.perf_counter() - t0
    names = [p.name for p in written]
    if as_json:
        doc = summary_json(result, str(out), names, seconds)
        doc["check"] = {k: v for k, v in result.details["check"].items()
                        if not isinstance(v, float) or math.isfinite(v)}  # fmt: skip
        typer.echo(json.dumps(doc, indent=2, default=str))
    elif not quiet:
        if synthetic:
            _print_synthetic(result)
        elif mechanism is not None:
            _print_mechanism(result)
        else:
            _print_aligned(result, epsilon is None)
        console.print(f"wrote {', '.join(names)} to {out} in {seconds:.1f} s", soft_wrap=True,
                      highlight=False)  # fmt: skip
    if not result.satisfied:
        raise typer.Exit(3)
