"""``privwatch reproduce``: a figure or table of the papers (``gallery.reproduce``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._io import console, fail


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
