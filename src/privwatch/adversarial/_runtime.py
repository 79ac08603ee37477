"""CUDA-graph helpers shared by the adversarial trainers (defined in :mod:`privwatch._cuda_graph`,
layer 0, so that the neural lift estimators warn with the same class).

* :func:`capture` records one training epoch as a CUDA graph (or says why it could not);
* :func:`warm_up` runs an eager epoch on a side stream, as graph capture requires;
* :class:`GraphFallbackWarning` says why a fit on CUDA ran eagerly instead of as a graph.

Seeding, building and device helpers live in :mod:`privwatch._torch`.
"""

from __future__ import annotations

from .._cuda_graph import GraphFallbackWarning, capture, warm_up

__all__ = ["GraphFallbackWarning", "capture", "warm_up"]
