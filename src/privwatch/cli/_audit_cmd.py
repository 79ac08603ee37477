"""``privwatch audit`` and ``privwatch reproduce``: parse, call the library, print."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..exceptions import PrivacyWarning, PrivwatchError
from ..preprocessing import DEFAULT_MAX_LEVELS
from ..release import ReleaseNotMetWarning, parse_hierarchy_specs
from ..report import AuditResult, audit, check_writable, write_audit
from ._io import console, err_console, fail, load_input


def audit_command(
    data: Annotated[Path | None, typer.Argument(help="CSV or Parquet file.")] = None,
    sensitive: Annotated[str | None, typer.Option(help="The sensitive column.")] = None,
    observed: Annotated[
        str | None, typer.Option(help="Comma-separated observed columns (default: all others).")
    ] = None,
    epsilon: Annotated[
        float | None, typer.Option(help="Threshold on |log-lift|; proposed when omitted.")
    ] = None,
    delta: Annotated[float | None, typer.Option(help="(epsilon, delta) relaxation.")] = None,
    epsilon_max: Annotated[float, typer.Option(help="Cap with --delta.")] = math.inf,
    estimator: Annotated[str, typer.Option(help="plugin, classifier or dv.")] = "plugin",
    bins: Annotated[
        list[str] | None, typer.Option(help="Bin a numeric column: col=k or col=e1,e2,...")
    ] = None,
    missing: Annotated[str, typer.Option(help="error, drop or category.")] = "error",
    force: Annotated[bool, typer.Option(help="Allow identifier-like observed columns.")] = False,
    max_levels: Annotated[
        int, typer.Option(help="Numeric columns with more values must be binned (plug-in).")
    ] = DEFAULT_MAX_LEVELS,
    dataset: Annotated[str | None, typer.Option(help="A bundled data set: compas.")] = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("privwatch-audit"),
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    hierarchy: Annotated[
        list[str] | None,
        typer.Option(help="COL=FILE: an ARX-style hierarchy (value;coarser;...;*) for COL."),
    ] = None,
    disclosure: Annotated[
        str,
        typer.Option(
            help="both (two-sided lift privacy) or positive (beliefs may only grow by e^epsilon)."
        ),
    ] = "both",
    max_suppressed: Annotated[
        float, typer.Option(help="Largest share of records the release may suppress.")
    ] = 0.05,
    folds: Annotated[int, typer.Option(help="Folds of the held-out check (0: none).")] = 5,
    useful: Annotated[
        str | None, typer.Option(help="Keep the most information about this column.")
    ] = None,
    local: Annotated[bool, typer.Option(help="Try local recoding beside global recoding.")] = True,
    held_out_tolerance: Annotated[
        float, typer.Option(help="Largest held-out breach probability still called met.")
    ] = 0.05,
    confidence: Annotated[
        float | None,
        typer.Option(
            help="Cells must also pass with the credible bounds of their sensitive "
            "shares at this level (e.g. 0.9): a margin for held-out records."
        ),
    ] = None,
) -> None:
    """Audit a table: score every record, release a lift-private version, write a report."""
    t0 = time.perf_counter()
    try:
        check_writable(out)
        df, sensitive_col, cols, spec = load_input(
            data, dataset, sensitive, observed, bins, preset_bins=estimator == "plugin"
        )
        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            task = bar.add_task("reading", total=None)

            def step(message: str) -> None:
                bar.update(task, description=message)

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", PrivacyWarning)
                result = audit(
                    df,
                    sensitive_col.split(",") if "," in sensitive_col else sensitive_col,
                    cols,
                    epsilon=epsilon,
                    delta=delta,
                    epsilon_max=epsilon_max,
                    estimator=estimator,
                    bins=spec,
                    missing=missing,
                    force=force,
                    max_levels=max_levels,
                    rng=seed,
                    step=step,
                    hierarchies=parse_hierarchy_specs(hierarchy or []),
                    disclosure=disclosure,
                    max_suppressed=max_suppressed,
                    folds=folds,
                    useful=useful,
                    local=local,
                    held_out_tolerance=held_out_tolerance,
                    confidence=confidence,
                )
            step("writing the outputs")
            written = write_audit(result, out)
    except PrivwatchError as exc:
        fail(str(exc))
        return
    except OSError as exc:
        fail(f"could not write the outputs to {out}: {exc}; nothing was left there.")
        return
    for w in {str(w.message) for w in caught if not issubclass(w.category, ReleaseNotMetWarning)}:
        err_console.print(f"[yellow]warning:[/] {w}", highlight=False, soft_wrap=True)
    if result.found is not None:
        print_release(result, epsilon is None)
        console.print(
            f"wrote {', '.join(p.name for p in written)} to {out} in "
            f"{time.perf_counter() - t0:.1f} s",
            soft_wrap=True,
        )
        if not result.satisfied:
            raise typer.Exit(3)
        return
    g = result.watchdog.guarantee_
    table = Table(title="privwatch audit")
    table.add_column("")
    table.add_column("value", justify="right")
    rows = [
        ("records", f"{result.summary['n_records']}"),
        ("epsilon (threshold)", f"{result.epsilon:.4g}"),
        ("flagged records", f"{result.summary['n_flagged']}"),
        ("lift-privacy level of the release", f"{g.epsilon:.4g} nats"),
        ("breach probability (delta)", f"{g.delta:.4g}"),
    ]
    before = result.leakage["before"]
    if "mutual_information" in before:
        rows.append(
            (
                "I(S;X) before -> after",
                f"{before['mutual_information']:.4g} -> "
                f"{result.leakage['after']['mutual_information']:.4g} nats",
            )
        )
    utility = result.leakage["utility"]
    rows.append(
        (
            "utility I(X;Y)",
            f"{utility.get('mutual_information', utility.get('utility_mi')):.4g} nats",
        )
    )
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)
    if epsilon is None:
        console.print(
            f"epsilon proposed: {result.epsilon:.4g} ({result.epsilon_reason}).", soft_wrap=True
        )
    console.print(g.explain(), soft_wrap=True)
    console.print(
        f"wrote {', '.join(p.name for p in written)} to {out} in {time.perf_counter() - t0:.1f} s",
        soft_wrap=True,
    )
    if not result.satisfied:
        for reason in result.leakage.get("reasons", []):
            err_console.print(f"[bold red]NOT MET:[/] {reason}", highlight=False, soft_wrap=True)
        raise typer.Exit(3)


def experiments_root() -> Path:
    """The ``experiments/`` folder of a source checkout (PRIVWATCH_EXPERIMENTS overrides)."""
    env = os.environ.get("PRIVWATCH_EXPERIMENTS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "experiments"


def reproduce_command(
    name: Annotated[str | None, typer.Argument(help="Experiment folder name.")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments.")] = False,
) -> None:
    """Run a reproduction in experiments/NAME and say where its results went."""
    root = experiments_root()
    if not root.is_dir():
        fail(
            f"no experiments folder at {root}: run from a source checkout of privwatch or set "
            "PRIVWATCH_EXPERIMENTS."
        )
    available = sorted(p.name for p in root.iterdir() if (p / "run.py").is_file())
    if list_ or name is None:
        for n in available:
            doc = (root / n / "run.py").read_text().split('"""')[1].strip().splitlines()[0]
            console.print(f"[bold]{n}[/]  {doc}", highlight=False, soft_wrap=True)
        return
    if name not in available:
        fail(f"NAME must be one of {available}; got {name!r}.")
    code = subprocess.call([sys.executable, str(root / name / "run.py")])
    if code != 0:
        fail(f"experiment {name} failed with exit code {code}.")
    outputs = sorted(p.name for p in (root / name).iterdir() if p.suffix in (".json", ".png"))
    console.print(f"results in {root / name}: {', '.join(outputs)}", soft_wrap=True)


def print_release(result: AuditResult, proposed: bool) -> None:
    """The verdict first (in colour and words), then the figures of the searched release."""
    found = result.found
    assert found is not None
    n = found.n_records
    if found.satisfied:
        console.print("[bold green]MET[/]: the release meets the requested guarantee.")
    else:
        console.print("[bold red]NOT MET[/]: the request cannot be delivered as asked.")
        for reason in found.reasons:
            console.print(f"  [red]- {reason}[/]", highlight=False, soft_wrap=True)
        if found.alternatives:
            console.print("Nearest feasible alternatives:")
            for alt in found.alternatives:
                console.print(f"  - {alt}", highlight=False, soft_wrap=True)
    console.print(result.leakage["guarantee_in_words"], soft_wrap=True, highlight=False)
    table = Table(title="privwatch audit")
    table.add_column("")
    table.add_column("value", justify="right")
    held = found.held_out
    rows = [
        ("records", f"{n:,}"),
        ("epsilon, disclosure", f"{found.epsilon:g} nats, {found.disclosure}"),
        ("release", f"{found.method} recoding"),
        (
            "information kept",
            f"{found.information_nats:.2f} of {found.information_input_nats:.2f} nats",
        ),
        ("records suppressed", f"{found.suppressed_records:,} of {n:,}"),
        ("worst log-lift, in-sample", f"{found.max_log_lift:.3f} nats (exact)"),
    ]
    if held is not None:
        lo, hi = held.breach_probability_ci
        rows.append(
            (
                "held-out breach probability",
                f"{held.breach_probability:.1%} (95 % {lo:.1%}-{hi:.1%})",
            )
        )
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)
    if proposed:
        console.print(
            f"epsilon proposed: {result.epsilon:.4g} ({result.epsilon_reason}).", soft_wrap=True
        )
