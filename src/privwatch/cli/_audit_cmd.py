"""``privwatch apply`` and ``privwatch reproduce``: parse, call, print (audit: ``_audit.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..release.generalisation import apply_saved_mechanism
from ._io import console, fail, writes_or_leaves_nothing


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
    with writes_or_leaves_nothing(out):  # an error: one line, exit 2, no folder left behind
        batch = apply_saved_mechanism(
            mechanism, data, out, overwrite=overwrite, sep=sep, encoding=encoding
        )
    n, unseen = batch.summary["n_records"], batch.summary["n_unseen"]
    if as_json:
        typer.echo(json.dumps(batch.summary, indent=2))
    elif not quiet:
        console.print(
            f"released {n:,} records through {mechanism.name} to {out / 'release.csv'}; "
            f"{unseen:,} of {n:,} had values never seen at fit time and were suppressed to '*'.",
            highlight=False,
            soft_wrap=True,
        )


def reproduce_command(
    name: Annotated[str | None, typer.Argument(help="Experiment name (see --list).")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Output folder; nothing else is written.")
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="The experiment's short run.")] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an earlier results.json in --out.")
    ] = False,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments.")] = False,
) -> None:
    """Reproduce a figure or table of the papers into --out (privwatch.gallery)."""
    from .. import gallery

    if list_ or name is None:
        for n in gallery.available():
            console.print(f"[bold]{n}[/]  {gallery.describe(n)}", highlight=False, soft_wrap=True)
        return
    if name not in gallery.available():
        fail(f"NAME must be one of {gallery.available()}; got {name!r}.")
    if out is None:
        fail("--out DIR is required: the folder the results and figures are written to.")
        return
    try:
        rep = gallery.reproduce(name, out, quick=quick, overwrite=overwrite)
    except (ValueError, FileExistsError) as exc:
        fail(str(exc))
        return
    for row in rep.results["side_by_side"]:
        console.print(f"{row['item']}: paper {row['paper']}, ours {row['ours']}", soft_wrap=True)
    console.print(f"results in {rep.out}: {', '.join(p.name for p in rep.files)}", soft_wrap=True)
