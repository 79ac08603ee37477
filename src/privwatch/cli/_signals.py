"""SIGTERM as an exception while a command runs, so that the library's ``finally`` blocks
(the staged outputs of :func:`privwatch.report.staged_files`) clean up; the library itself
installs no signal handler."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Terminated", "sigterm_raises"]


class Terminated(BaseException):
    """SIGTERM turned into an exception."""


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(f"terminated by signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
