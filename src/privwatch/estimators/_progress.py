"""A rich progress bar that shows only when asked and only for steps slower than a second."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["progress_bar"]


@contextmanager
def progress_bar(enabled: bool, description: str, total: int) -> Iterator[Callable[[], None]]:
    """Yield ``advance()``; the bar appears once the work has run for a second (transient)."""
    if not enabled:
        yield lambda: None
        return
    from rich.progress import Progress

    start = time.perf_counter()
    with Progress(transient=True) as bar:
        task = bar.add_task(description, total=total, visible=False)

        def advance() -> None:
            visible = time.perf_counter() - start > 1.0
            bar.update(task, advance=1, visible=visible)

        yield advance
