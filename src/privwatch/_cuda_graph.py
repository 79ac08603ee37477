"""CUDA-graph helpers shared by every stacked trainer (adversarial mechanisms, neural lift).

* :func:`capture` records one training epoch as a CUDA graph (or says why it could not);
* :func:`warm_up` runs an eager epoch on a side stream, as graph capture requires;
* :class:`GraphFallbackWarning` says why a fit on CUDA ran eagerly instead of as a graph.

Layer 0 (beside :mod:`privwatch._trainer`), so that the estimators and the adversarial
mechanisms warn with one class; :mod:`privwatch.adversarial` re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._torch import torch

__all__ = ["GraphFallbackWarning", "capture", "warm_up"]


class GraphFallbackWarning(UserWarning):
    """A fit asked to run as a CUDA graph ran eagerly; the message says why."""


def capture(body: Callable[[], None], what: str) -> tuple[Any, str | None]:
    """Capture ``body`` as a CUDA graph: (graph, None), or (None, why it failed)."""
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            body()
    except RuntimeError as exc:  # e.g. an operation that cannot be captured
        return None, f"capturing {what} failed ({str(exc).splitlines()[0]})"
    return graph, None


def warm_up(body: Callable[[], None], device: Any) -> None:
    """Run ``body`` eagerly on a side stream of ``device`` (the warm-up CUDA graphs need)."""
    side = torch.cuda.Stream(device=device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        body()
    torch.cuda.current_stream(device).wait_stream(side)
