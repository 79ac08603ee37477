"""``privwatch apply``: parse, call :func:`privwatch.release.generalisation.apply_saved_mechanism`,
print."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..release.generalisation import apply_saved_mechanism
from ._io import console, writes_or_leaves_nothing


def apply_command(
    mechanism: Annotated[Path, typer.Argument(help="JSON written by audit --save-mechanism.")],
    data: Annotated[
        str,
        typer.Argument(
            help="New records: CSV, Excel, Parquet or JSONL; a glob of Parquet/CSV files or a "
            "database URL (with --table) is released in an engine (release.parquet)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output folder (new or empty).")] = Path(
        "privwatch-apply"
    ),
    overwrite: Annotated[bool, typer.Option(help="Replace outputs in a non-empty folder.")] = False,
    sep: Annotated[str, typer.Option(help="Field separator of a CSV file.")] = ",",
    encoding: Annotated[str, typer.Option(help="Text encoding of a CSV or JSONL file.")] = "utf-8",
    seed: Annotated[
        int | None, typer.Option(help="Seed of a randomized release's draws (reproducible).")
    ] = None,
    engine: Annotated[
        str,
        typer.Option(
            help="auto, pandas, polars, duckdb, spark or sql: where the records are released. "
            "auto: in memory (pandas) for a small file, else DuckDB, the database for a URL; "
            "an engine writes release.parquet, pandas release.csv."
        ),
    ] = "auto",
    table: Annotated[str | None, typer.Option(help="The table of a database URL.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary on stdout.")
    ] = False,
) -> None:
    """Release new records through a fitted generalisation (values never seen: '*')."""
    # an error: one line, exit 2, no folder left behind; `mechanism` is the argument MECHANISM
    with writes_or_leaves_nothing(out, {"mechanism": "MECHANISM"}):
        batch = apply_saved_mechanism(
            mechanism, data, out, overwrite=overwrite, sep=sep, encoding=encoding, seed=seed,
            engine=engine, table=table,
        )  # fmt: skip
    n, unseen = batch.summary["n_records"], batch.summary["n_unseen"]
    if as_json:
        typer.echo(json.dumps(batch.summary, indent=2))
    elif not quiet:
        console.print(
            f"released {n:,} records through {mechanism.name} to {batch.files[0]}; "
            f"{unseen:,} of {n:,} had values never seen at fit time and were suppressed to '*'.",
            highlight=False,
            soft_wrap=True,
        )
