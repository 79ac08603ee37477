"""Typer application: ``privwatch leakage``."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..audit import privwatch_version
from ..exceptions import PrivacyWarning, PrivwatchError
from ..joint import Joint
from ..preprocessing import DEFAULT_MAX_LEVELS, bin_columns, format_bins
from ._apply import apply_command
from ._audit import audit_command
from ._check import check_command
from ._io import console, err_console, fail, load_input
from ._reproduce import reproduce_command
from ._serve import serve_command

app = typer.Typer(
    help="privwatch: information-theoretic privacy of data releases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"privwatch {privwatch_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """privwatch: measure, watch and optimise the privacy of data releases."""


@app.command()
def leakage(
    data: Annotated[
        Path | None,
        typer.Argument(help="CSV, Excel, Parquet or JSON Lines file (omit with --dataset)."),
    ] = None,
    sensitive: Annotated[str | None, typer.Option(help="The sensitive column.")] = None,
    observed: Annotated[
        str | None, typer.Option(help="Comma-separated observed columns (default: all others).")
    ] = None,
    dataset: Annotated[
        str | None, typer.Option(help="A bundled data set instead of DATA: compas.")
    ] = None,
    bins: Annotated[
        list[str] | None,
        typer.Option(help="Bin a numeric column: col=k (k quantile bins) or col=e1,e2,..."),
    ] = None,
    max_levels: Annotated[
        int, typer.Option(help="Numeric columns with more distinct values must be binned.")
    ] = DEFAULT_MAX_LEVELS,
    smoothing: Annotated[float, typer.Option(help="Additive smoothing of the counts.")] = 0.0,
    alpha: Annotated[float, typer.Option(help="Order of Sibson's and Arimoto's MI.")] = 2.0,
    base: Annotated[float | None, typer.Option(help="Log base (default: nats).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Print every leakage measure of the plug-in joint of SENSITIVE and OBSERVED columns."""
    try:
        df, sensitive_col, cols, spec = load_input(data, dataset, sensitive, observed, bins)
        if dataset is not None and not as_json:
            console.print(f"[dim]{dataset}: {len(df)} records; binning {format_bins(spec)}[/]")
        if spec:
            df = bin_columns(df, spec)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PrivacyWarning)
            joint = Joint.from_frame(
                df, sensitive_col, cols, smoothing=smoothing, max_levels=max_levels
            )
            report = joint.leakage(alpha=alpha, base=base)
    except PrivwatchError as exc:
        fail(str(exc))
        return
    if as_json:
        out = {
            "sensitive": joint.sensitive_name,
            "observed": joint.observed_name,
            "n_records": len(df),
            "shape": list(joint.shape),
            "measures": {
                k: (v if not isinstance(v, float) or math.isfinite(v) else str(v))
                for k, v in report.to_dict().items()
            },
        }
        typer.echo(json.dumps(out, indent=2))
        return
    for w in caught:
        err_console.print(f"[yellow]warning:[/] {w.message}", highlight=False, soft_wrap=True)
    table = Table(title=f"Leakage of {joint.sensitive_name!r} through {joint.observed_name!r}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    for name, value, desc in report.rows():
        table.add_row(name, f"{value:.6g}", desc)
    console.print(table)
    n_s, n_x = joint.shape
    console.print(f"{len(df)} records, {n_s} sensitive values, {n_x} observed symbols (plug-in).")


app.command("audit")(audit_command)
app.command("apply")(apply_command)
app.command("check")(check_command)
app.command("reproduce")(reproduce_command)
app.command("serve")(serve_command)


def main() -> None:
    """Entry point of the ``privwatch`` console script."""
    app()
