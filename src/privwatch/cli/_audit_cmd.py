"""``privwatch audit``, ``privwatch apply`` and ``privwatch reproduce``: parse, call, print."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from ..exceptions import PrivwatchError
from ..preprocessing import DEFAULT_MAX_LEVELS
from ..release import ReleaseNotMetWarning, parse_hierarchy_specs
from ..report import (
    apply_mechanism,
    audit,
    check_writable,
    file_sha256,
    load_mechanism,
    save_mechanism,
    write_audit,
)
from ._io import console, err_console, fail, load_config, load_input, read_table
from ._print import print_release, print_watchdog, summary_json

#: The audit's steps (plug-in route), for the progress bar's length.
AUDIT_STEPS = 9


@contextmanager
def progress(enabled: bool, total: int) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr; ``step(message)`` starts the next step."""
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not enabled,
    ) as bar:
        task = bar.add_task("reading", total=total)
        started = [False]

        def step(message: str) -> None:
            if started[0]:
                bar.advance(task)
            started[0] = True
            bar.update(task, description=message)

        yield step
        bar.update(task, completed=total)


def audit_command(
    ctx: typer.Context,
    data: Annotated[
        Path | None,
        typer.Argument(help="CSV, Excel (.xlsx), Parquet or JSON Lines (.jsonl) file."),
    ] = None,
    sensitive: Annotated[
        str | None, typer.Option(help="The sensitive column (comma-separated for several).")
    ] = None,
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
        list[str] | None,
        typer.Option(help="Bin a numeric column: col=k or col=e1,e2,... (before the checks)."),
    ] = None,
    missing: Annotated[str, typer.Option(help="error, drop or category.")] = "error",
    force: Annotated[bool, typer.Option(help="Allow identifier-like observed columns.")] = False,
    max_levels: Annotated[
        int, typer.Option(help="Numeric columns with more values must be binned (plug-in).")
    ] = DEFAULT_MAX_LEVELS,
    dataset: Annotated[str | None, typer.Option(help="A bundled data set: compas.")] = None,
    out: Annotated[Path, typer.Option(help="Output folder (new or empty).")] = Path(
        "privwatch-audit"
    ),
    overwrite: Annotated[
        bool, typer.Option(help="Replace the outputs in a folder that already holds files.")
    ] = False,
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
    checks: Annotated[
        bool, typer.Option(help="Compute the classic measures and the inference attack.")
    ] = True,
    sep: Annotated[str, typer.Option(help="Field separator of a CSV file.")] = ",",
    encoding: Annotated[str, typer.Option(help="Text encoding of a CSV or JSONL file.")] = "utf-8",
    config: Annotated[
        Path | None,
        typer.Option(help="TOML file with any of these options (the command line wins)."),
    ] = None,
    save_mechanism_to: Annotated[
        Path | None,
        typer.Option(
            "--save-mechanism",
            help="Save the fitted generalisation (JSON) for `privwatch apply`.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary on stdout, nothing else.")
    ] = False,
) -> None:
    """Audit a table: score every record, release a lift-private version, write a report."""
    t0 = time.perf_counter()
    try:
        o: dict[str, Any] = load_config(ctx, config)
        o["save_mechanism"] = o.pop("save_mechanism_to", None)
        target = Path(o["out"])
        check_writable(target, bool(o["overwrite"]))
        df, sensitive_col, cols, spec = load_input(
            o["data"],
            o["dataset"],
            o["sensitive"],
            o["observed"],
            o["bins"],
            preset_bins=o["estimator"] == "plugin",
            sep=o["sep"],
            encoding=o["encoding"],
        )
        with (
            progress(not (o["quiet"] or o["as_json"]), AUDIT_STEPS) as step,
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            result = audit(
                df,
                sensitive_col.split(",") if "," in sensitive_col else sensitive_col,
                cols,
                epsilon=o["epsilon"],
                delta=o["delta"],
                epsilon_max=o["epsilon_max"],
                estimator=o["estimator"],
                bins=spec,
                missing=o["missing"],
                force=o["force"],
                max_levels=o["max_levels"],
                rng=o["seed"],
                step=step,
                hierarchies=parse_hierarchy_specs(o["hierarchy"] or []),
                disclosure=o["disclosure"],
                max_suppressed=o["max_suppressed"],
                folds=o["folds"],
                useful=o["useful"],
                local=o["local"],
                held_out_tolerance=o["held_out_tolerance"],
                confidence=o["confidence"],
                source_path=o["data"],
                checks=o["checks"],
            )
            step("writing the outputs")
            written = write_audit(result, target, overwrite=True)
            if o["save_mechanism"] is not None:
                written.append(save_mechanism(result, o["save_mechanism"]))
    except PrivwatchError as exc:
        fail(str(exc))
        return
    except OSError as exc:
        fail(f"could not write the outputs to {out}: {exc}; nothing was left there.")
        return
    seconds = time.perf_counter() - t0
    if o["as_json"]:
        doc = summary_json(result, str(target), [p.name for p in written], seconds)
        typer.echo(json.dumps(doc, indent=2))
    elif not o["quiet"]:
        shown = {str(w.message) for w in caught if not issubclass(w.category, ReleaseNotMetWarning)}
        for w in sorted(shown):
            err_console.print(f"[yellow]warning:[/] {w}", highlight=False, soft_wrap=True)
        printer = print_release if result.found is not None else print_watchdog
        printer(result, o["epsilon"] is None)
        console.print(
            f"wrote {', '.join(p.name for p in written)} to {target} in {seconds:.1f} s",
            soft_wrap=True,
            highlight=False,
        )
    if not result.satisfied:
        if result.found is None and not (o["quiet"] or o["as_json"]):
            for reason in result.leakage.get("reasons", []):
                err_console.print(
                    f"[bold red]NOT MET:[/] {reason}", highlight=False, soft_wrap=True
                )
        raise typer.Exit(3)


def apply_command(
    mechanism: Annotated[Path, typer.Argument(help="JSON written by audit --save-mechanism.")],
    data: Annotated[Path, typer.Argument(help="New records: CSV, Excel, Parquet or JSONL.")],
    out: Annotated[Path, typer.Option(help="Output folder (new or empty).")] = Path(
        "privwatch-apply"
    ),
    overwrite: Annotated[bool, typer.Option(help="Replace outputs in a non-empty folder.")] = False,
    sep: Annotated[str, typer.Option(help="Field separator of a CSV file.")] = ",",
    encoding: Annotated[str, typer.Option(help="Text encoding of a CSV or JSONL file.")] = "utf-8",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary on stdout.")
    ] = False,
) -> None:
    """Release new records through a fitted generalisation (values never seen: '*')."""
    try:
        check_writable(out, overwrite)
        mech = load_mechanism(mechanism)
        df = read_table(data, sep=sep, encoding=encoding)
        applied = apply_mechanism(mech, df)
        frame = applied.released.assign(unseen=applied.unseen)
        frame.index = applied.input_rows
        frame.index.name = "record"
        tmp = out / ".privwatch-staging-release.csv"
        frame.to_csv(tmp)
        os.replace(tmp, out / "release.csv")
        summary = {
            "mechanism": mechanism.name,
            "mechanism_sha256": file_sha256(mechanism),
            "input_name": data.name,
            "input_sha256": file_sha256(data),
            "n_records": len(df),
            "n_unseen": applied.n_unseen,
            "unseen_rule": mech.get("unseen_rule", ""),
            "fitted_status": mech.get("status"),
            "epsilon": mech.get("epsilon"),
        }
        (out / "apply.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    except PrivwatchError as exc:
        fail(str(exc))
        return
    except OSError as exc:
        fail(f"could not write the outputs to {out}: {exc}.")
        return
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    elif not quiet:
        console.print(
            f"released {len(df):,} records through {mechanism.name} to {out / 'release.csv'}; "
            f"{applied.n_unseen:,} of {len(df):,} had values never seen at fit time and were "
            "suppressed to '*'.",
            highlight=False,
            soft_wrap=True,
        )


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
