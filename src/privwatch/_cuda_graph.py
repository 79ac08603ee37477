"""CUDA-graph helpers shared by every stacked trainer (adversarial mechanisms, neural lift).

* :func:`capture` records one training epoch as a CUDA graph (or says why it could not);
* :func:`warm_up` runs an eager epoch on a side stream, as graph capture requires;
* :func:`graphed_epoch` runs one epoch of a stacked trainer the way all of them do (eager
  warm-up, capture at the second epoch, replay after);
* :func:`run_stacked` runs a stacked trainer, warns when it could not run as a graph, and hands
  every member its results;
* :class:`GraphFallbackWarning` says why a fit on CUDA ran eagerly instead of as a graph.

Layer 0 (beside :mod:`privwatch._trainer`), so that the estimators and the adversarial
mechanisms warn with one class; :mod:`privwatch.adversarial` re-exports it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ._torch import torch

__all__ = ["GraphFallbackWarning", "capture", "graphed_epoch", "run_stacked", "warm_up"]


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


def graphed_epoch(trainer: Any, epoch: int, what: str) -> None:
    """One epoch of ``trainer.epoch_body``: on CUDA, eager on a side stream at epoch 0 (the
    warm-up), captured as a graph at epoch 1 and replayed from then on; eager throughout once
    ``trainer.reason`` says why not (off the GPU, capture off, or a capture that failed).
    ``trainer`` holds ``graph``, ``reason``, ``dev`` and ``epoch_body``."""
    if trainer.reason is None and epoch == 1:
        trainer.graph, trainer.reason = capture(trainer.epoch_body, what)
    if trainer.graph is not None:
        trainer.graph.replay()
    elif trainer.reason is None:  # the eager warm-up epoch, on a side stream
        warm_up(trainer.epoch_body, trainer.dev)
    else:
        trainer.epoch_body()


def run_stacked(trainer: Any, cuda_graph: bool, what: str) -> None:
    """``trainer.run()``, a :class:`GraphFallbackWarning` naming ``what`` when a fit asked to
    run as a CUDA graph (``cuda_graph``, on CUDA) ran eagerly, then ``trainer.unstack()``. The
    warning points at the code that called the stacked fit's caller (``fit_many``'s)."""
    trainer.run()
    if trainer.on_cuda and cuda_graph and trainer.graph is None:
        warnings.warn(
            f"{what} ran eagerly on {trainer.dev}: {trainer.reason}.",
            GraphFallbackWarning,
            stacklevel=4,
        )
    trainer.unstack()
