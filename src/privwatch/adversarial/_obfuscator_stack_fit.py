"""Which obfuscators one stacked run can fit, and the run that fits them
(:mod:`~privwatch.adversarial._obfuscator_stacked` has the stacked games)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._cuda_graph import run_stacked
from ._obfuscator_stacked import StackedBayesGame, StackedGame
from ._obfuscator_stacked_clf import StackedClassifierGame

__all__ = ["can_stack_obfuscators", "fit_stacked_obfuscators"]

_SHARED = (
    "loss",
    "generator",
    "anchor_grid",
    "attacker",
    "alpha",
    "beta",
    "margin",
    "noise_dim",
    "generator_hidden",
    "classifier_hidden",
    "max_iter",
    "patience",
    "hits",
    "classifier_epochs",
    "classifier_batch_size",
    "classifier_lr",
    "generator_epochs",
    "generator_batch_size",
    "generator_lr",
    "validation_fraction",
    "device",
    "cuda_graph",
)


def _sizes(sample: Any) -> Any:
    """The data's shape and the users' counts (which fix the split's sizes)."""
    labels = np.asarray(sample[1])
    _, counts = np.unique(labels, return_counts=True)
    return np.shape(sample[0]), tuple(int(c) for c in counts)


def can_stack_obfuscators(models: Sequence[Any], samples: Sequence[Any]) -> bool:
    """True when ``models`` are obfuscators one stacked run can fit: the same settings but
    ``budget``, ``init_epsilon`` and ``rng``, no callbacks or progress bar, and
    ``(observed, sensitive)`` data of one shape with the same number of points per user."""
    from ._obfuscator import Obfuscator

    if len(models) < 2 or not all(type(m) is Obfuscator for m in models):
        return False
    first = models[0]
    for m in models:
        if m.callbacks or m.progress or any(getattr(m, k) != getattr(first, k) for k in _SHARED):
            return False
    if any(len(t) != 2 for t in samples):
        return False
    try:
        return len({_sizes(t) for t in samples}) == 1
    except (TypeError, ValueError):  # labels numpy cannot sort: each fit says what is wrong
        return False


def fit_stacked_obfuscators(models: Sequence[Any], samples: Sequence[Any]) -> list[Any]:
    """Fit ``models`` (see :func:`can_stack_obfuscators`) in one stacked run on their
    ``(observed, sensitive)`` samples; returns them fitted, each as its own ``fit`` would up to
    float rounding (on the CPU)."""
    for m in models:
        m._validate()
    setups = [m._setup(*t) for m, t in zip(models, samples, strict=True)]
    game: StackedGame
    if models[0].attacker == "bayes":
        game = StackedBayesGame(models, setups)
    else:
        game = StackedClassifierGame(models, setups)
    run_stacked(game, models[0].cuda_graph, "the stacked obfuscator fit")
    return list(models)
