"""``privwatch audit``: parse the options, call the audit, print what it found.

Two library routes, chosen by :func:`privwatch.engines.choose_engine` and stated in the output:
records that fit in pandas go through :func:`privwatch.report.audit` (the full report);
Parquet lakes, large files, globs and database tables go through
:func:`privwatch.report.audit_source` (counted and labelled in DuckDB, Polars, Spark or the
database; only the count table comes to Python).
"""

from __future__ import annotations

import json
import math
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

from .. import engines
from ..exceptions import PrivwatchError, ValidationError
from ..preprocessing import DEFAULT_MAX_LEVELS
from ..release import ReleaseNotMetWarning, parse_hierarchy_specs
from ..report import (
    NEURAL_SOURCE_ESTIMATORS,
    AuditResult,
    NeuralSourceAudit,
    SourceAudit,
    audit,
    audit_source,
    audit_source_neural,
    check_writable,
    save_mechanism,
    write_audit,
    write_source_audit,
)
from ._io import console, err_console, fail, load_config, load_input
from ._print import (
    print_neural_source,
    print_release,
    print_source,
    print_watchdog,
    summary_json,
)

__all__ = ["AUDIT_STEPS", "audit_command"]

#: The audit's steps (plug-in route), for the progress bar's length.
AUDIT_STEPS = 9
#: Options of the in-memory audit that an engine audit cannot honour (it never sees records).
MEMORY_ONLY = {"bins": None, "delta": None, "save_mechanism": None, "estimator": "plugin"}


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


def read_options(ctx: typer.Context, config: Path | None) -> dict[str, Any]:
    """Step 1: the command line merged with the --config file."""
    o: dict[str, Any] = load_config(ctx, config)
    o["save_mechanism"] = o.pop("save_mechanism_to", None)
    o["talk"] = not (o["quiet"] or o["as_json"])
    return o


def choose_route(o: dict[str, Any]) -> tuple[str, str, bool]:
    """Step 2: (engine, why, in_memory). The in-memory audit reads one pandas-sized file or a
    bundled data set; everything else is audited in its engine."""
    if o["dataset"] is not None:
        return "pandas", f"bundled data set {o['dataset']}", True
    if o["data"] is None:
        raise ValidationError("give a DATA file, glob or database URL, or --dataset NAME.")
    engine, reason = engines.choose_engine(str(o["data"]), o["engine"], o["table"])
    single_file = "://" not in str(o["data"]) and Path(str(o["data"])).is_file()
    in_memory = engine == "pandas" and single_file and o["write_table"] is None
    if not in_memory and o["estimator"] in NEURAL_SOURCE_ESTIMATORS:
        return neural_route(o, reason)
    if not in_memory:
        for name, default in MEMORY_ONLY.items():
            if o[name] and o[name] != default:
                raise ValidationError(
                    f"--{name.replace('_', '-')} needs the records in memory; it is not "
                    f"available when auditing in the {engine} engine ({reason})."
                )
    return engine, reason, in_memory


def neural_route(o: dict[str, Any], reason: str) -> tuple[str, str, bool]:
    """The route of a learned estimator on a source too large for memory: its records are
    streamed from Parquet files (cross-fitted training, then one scoring pass)."""
    name = f"--estimator {o['estimator']}"
    if "://" in str(o["data"]) or o["table"] is not None:
        raise ValidationError(
            f"{name} trains on batches streamed from Parquet files and cannot read a database "
            "table; export the table to Parquet, or use --estimator plugin (counted in the "
            "database)."
        )
    if o["engine"] != "auto":
        raise ValidationError(
            f"{name} streams the Parquet files itself; leave --engine at auto, or use "
            f"--estimator plugin to count in {o['engine']}."
        )
    if o["write_table"] is not None and not str(o["write_table"]).endswith(".parquet"):
        raise ValidationError(f"--write-table must be a .parquet path with {name}.")
    if o["epsilon"] is None:
        raise ValidationError(
            f"--epsilon is required with {name} on a source that does not fit in memory (the "
            "in-memory audit proposes one from every record's risk)."
        )
    if o["folds"] < 2:
        raise ValidationError(f"{name} scores every record cross-fitted: --folds must be >= 2.")
    for option in ("bins", "delta", "save_mechanism"):
        if o[option]:
            raise ValidationError(
                f"--{option.replace('_', '-')} needs the records in memory; it is not "
                f"available with {name} on a streamed source."
            )
    why = "a glob of files" if not Path(str(o["data"])).is_file() else reason
    return "stream", f"{why}: {name} reads the Parquet files in batches", False


def audit_neural_stream(o: dict[str, Any], target: Path) -> tuple[NeuralSourceAudit, list[Path]]:
    """Step 3c: a learned estimator on a streamed Parquet source; leakage.json and the labelled
    records."""
    if o["sensitive"] is None or o["observed"] is None:
        raise ValidationError("--sensitive and --observed are required with a DATA file or glob.")
    out = Path(o["write_table"] or target / "release.parquet")
    with progress(o["talk"], 3) as step:
        result = audit_source_neural(
            str(o["data"]),
            str(o["sensitive"]),
            str(o["observed"]).split(","),
            epsilon=float(o["epsilon"]),
            out=out,
            estimator=o["estimator"],
            folds=o["folds"],
            rng=o["seed"],
            step=step,
        )
        step("writing leakage.json")
        written = [write_source_audit(result, target), out]
    return result, written


def audit_in_memory(o: dict[str, Any], target: Path) -> tuple[AuditResult, list[Path], list[Any]]:
    """Step 3a: the full audit of a pandas table, its outputs written to ``target``."""
    df, sensitive_col, cols, spec = load_input(
        None if o["data"] is None else Path(str(o["data"])),
        o["dataset"],
        o["sensitive"],
        o["observed"],
        o["bins"],
        preset_bins=o["estimator"] == "plugin",
        sep=o["sep"],
        encoding=o["encoding"],
    )
    with (
        progress(o["talk"], AUDIT_STEPS) as step,
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
            force=o["force"],
            max_levels=o["max_levels"],
            step=step,
            **release_options(o),
            source_path=o["data"],
            checks=o["checks"],
        )
        step("writing the outputs")
        written = write_audit(result, target, overwrite=True)
        if o["save_mechanism"] is not None:
            written.append(save_mechanism(result, o["save_mechanism"]))
    return result, written, list(caught)


def release_options(o: dict[str, Any]) -> dict[str, Any]:
    """The options both routes (in memory and in an engine) pass to the release search."""
    return {
        "missing": o["missing"],
        "folds": o["folds"],
        "rng": o["seed"],
        "hierarchies": parse_hierarchy_specs(o["hierarchy"] or []),
        "disclosure": o["disclosure"],
        "max_suppressed": o["max_suppressed"],
        "useful": o["useful"],
        "local": o["local"],
        "held_out_tolerance": o["held_out_tolerance"],
        "confidence": o["confidence"],
    }


def audit_in_engine(o: dict[str, Any], target: Path, engine: str) -> tuple[SourceAudit, list[Path]]:
    """Step 3b: count and label in the engine; leakage.json and the labelled records."""
    if o["sensitive"] is None:
        raise ValidationError("--sensitive is required with a DATA file, glob or URL.")
    if o["observed"] is None:
        raise ValidationError("--observed is required when auditing in an engine.")
    to_file = o["write_table"] is None or str(o["write_table"]).endswith((".parquet", ".csv"))
    out = None if not to_file else Path(o["write_table"] or target / "release.parquet")
    sensitive = str(o["sensitive"])
    with progress(o["talk"], 5) as step:
        result = audit_source(
            str(o["data"]),
            sensitive.split(",") if "," in sensitive else sensitive,
            str(o["observed"]).split(","),
            epsilon=o["epsilon"],
            engine=engine,
            table=o["table"],
            out=out,
            write_table=None if to_file else o["write_table"],
            step=step,
            **release_options(o),
        )
        step("writing leakage.json")
        written = [write_source_audit(result, target)]
    if out is not None:
        written.append(out)
    return result, written


def print_in_memory(
    o: dict[str, Any], result: AuditResult, written: list[Path], caught: list[Any], target: Path
) -> None:
    """Step 4a: warnings, the verdict and the figures of the in-memory audit."""
    shown = {str(w.message) for w in caught if not issubclass(w.category, ReleaseNotMetWarning)}
    for w in sorted(shown):
        err_console.print(f"[yellow]warning:[/] {w}", highlight=False, soft_wrap=True)
    printer = print_release if result.found is not None else print_watchdog
    printer(result, o["epsilon"] is None)
    if not result.satisfied and result.found is None:
        for reason in result.leakage.get("reasons", []):
            err_console.print(f"[bold red]NOT MET:[/] {reason}", highlight=False, soft_wrap=True)


def audit_command(
    ctx: typer.Context,
    data: Annotated[
        str | None,
        typer.Argument(
            help="CSV, Excel (.xlsx), Parquet or JSON Lines file; a glob of Parquet/CSV files "
            "('lake/*.parquet'); or a database URL (postgresql://..., sqlite:///f.db, "
            "duckdb:///f.db) with --table."
        ),
    ] = None,
    sensitive: Annotated[
        str | None, typer.Option(help="The sensitive column (comma-separated for several).")
    ] = None,
    observed: Annotated[
        str | None, typer.Option(help="Comma-separated observed columns (default: all others).")
    ] = None,
    engine: Annotated[
        str,
        typer.Option(
            help="auto, pandas, polars, duckdb, spark or sql. auto: pandas for files up to "
            f"{engines.AUTO_THRESHOLD_BYTES // 2**20} MiB, DuckDB above; the database for URLs."
        ),
    ] = "auto",
    table: Annotated[str | None, typer.Option(help="The table of a database URL.")] = None,
    write_table: Annotated[
        str | None,
        typer.Option(
            help="Where the engine writes every record with its scores and release: a new "
            "table of the source database, or a .parquet/.csv path (default: OUT/release.parquet)."
        ),
    ] = None,
    epsilon: Annotated[
        float | None, typer.Option(help="Threshold on |log-lift|; proposed when omitted.")
    ] = None,
    delta: Annotated[float | None, typer.Option(help="(epsilon, delta) relaxation.")] = None,
    epsilon_max: Annotated[float, typer.Option(help="Cap with --delta.")] = math.inf,
    estimator: Annotated[
        str,
        typer.Option(
            help="plugin (counts), auto (the family with the lowest cross-validated log-loss), "
            "classifier, dv, quadratic_logistic, gaussian_mixture, gradient_boosting, mlp, nwj."
        ),
    ] = "plugin",
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
    found: SourceAudit | NeuralSourceAudit
    try:
        o = read_options(ctx, config)
        target = Path(o["out"])
        engine_name, reason, in_memory = choose_route(o)
        check_writable(target, bool(o["overwrite"]))
        if o["talk"]:
            console.print(f"[dim]engine: {engine_name} ({reason})[/]", highlight=False)
        if in_memory:
            result, written, caught = audit_in_memory(o, target)
        elif engine_name == "stream":
            found, written = audit_neural_stream(o, target)
        else:
            found, written = audit_in_engine(o, target, engine_name)
    except PrivwatchError as exc:
        fail(str(exc))
        return
    except OSError as exc:
        fail(f"could not write the outputs to {out}: {exc}; nothing was left there.")
        return
    seconds = time.perf_counter() - t0
    names = [p.name for p in written]
    satisfied = result.satisfied if in_memory else found.satisfied
    if o["as_json"]:
        doc = (
            summary_json(result, str(target), names, seconds)
            if in_memory
            else summary_json(found, str(target), names, seconds)
        )
        typer.echo(json.dumps({**doc, "engine": engine_name, "engine_reason": reason}, indent=2))
    elif o["talk"]:
        if in_memory:
            print_in_memory(o, result, written, caught, target)
        elif isinstance(found, NeuralSourceAudit):
            print_neural_source(found)
        else:
            print_source(found, o["epsilon"] is None)
        console.print(
            f"wrote {', '.join(names)} to {target} in {seconds:.1f} s",
            soft_wrap=True,
            highlight=False,
        )
    if not satisfied:
        raise typer.Exit(3)
