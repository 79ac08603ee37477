"""A progress bar on stderr whose steps the audit's ``progress`` callback advances."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from ._io import err_console

__all__ = ["progress"]


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
