"""Fitting many adversarial mechanisms at once: one per point of a privacy-utility curve."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_positive_int
from ..exceptions import ValidationError
from ._stacked import can_stack, fit_stacked

__all__ = ["fit_many"]

#: ``(observed, sensitive)`` or ``(observed, sensitive, useful)`` samples of one model.
Data = tuple[ArrayLike, ...]


def _fit_chunk(models: list[Any], data: list[Data], threads: int | None) -> list[Any]:
    if threads is not None:  # one torch thread per worker: the workers share the cores
        from .._torch import torch

        torch.set_num_threads(threads)
    if len(models) > 1:
        return fit_stacked(models, data)
    return [models[0].fit(*data[0])]


def _is_one_sample_set(data: Any) -> bool:
    return isinstance(data, tuple) and len(data) in (2, 3) and not isinstance(data[0], tuple)


def fit_many(
    models: Sequence[Any],
    data: Data | Sequence[Data],
    *,
    n_jobs: int = 1,
    progress: bool = False,
    stack: bool = True,
) -> list[Any]:
    """Fit every model (e.g. one :class:`PPAN` per distortion budget) and return them
    fitted, in order; with ``n_jobs > 1`` the fits run in that many worker processes (joblib),
    each with one torch thread, so a 20-point curve uses every core.

    ``data`` is one ``(observed, sensitive)`` or ``(observed, sensitive, useful)`` tuple shared
    by all models (see :meth:`PPAN.fit`), or a list of one such tuple per model (a fresh draw
    per budget, as in Tripathy, Wang, Ishwar §III). Each model keeps its own ``rng`` and
    initial weights, so the result is the same for every ``n_jobs``.

    With ``stack=True`` (default), finite-alphabet PPANs of one shape and one set of settings
    (matrix or factored mechanism, the paper's matrix adversary, no discriminator or callbacks)
    are trained as ``n_jobs`` stacked models instead of one by one: the same arithmetic (each
    model's own gradient, elementwise Adam, its own batch order), many times fewer torch calls.
    """
    models = list(models)
    if not models:
        raise ValidationError("`models` must hold at least one model; got none.")
    check_positive_int(n_jobs, "n_jobs")
    samples: list[Data]
    if _is_one_sample_set(data):
        samples = [data] * len(models)  # type: ignore[list-item]
    else:
        samples = list(data)  # type: ignore[arg-type]
        if len(samples) != len(models) or any(len(t) not in (2, 3) for t in samples):
            raise ValidationError(
                f"`data` must be one (observed, sensitive[, useful]) tuple or one per model "
                f"({len(models)}); got {len(samples)} entries."
            )
    if stack and can_stack(models, samples):  # finite PPANs: n_jobs stacked runs, one per core
        parts = np.array_split(np.arange(len(models)), min(n_jobs, len(models)))
        chunks = [([models[i] for i in p], [samples[i] for i in p]) for p in parts]
    else:  # one model per task
        chunks = [([m], [d]) for m, d in zip(models, samples, strict=True)]
    if n_jobs == 1:
        from rich.progress import track

        done = [
            _fit_chunk(ms, ds, None)
            for ms, ds in track(chunks, description="fitting", disable=not progress, transient=True)
        ]
    else:
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=n_jobs, verbose=5 if progress else 0)
        done = list(parallel(delayed(_fit_chunk)(ms, ds, 1) for ms, ds in chunks))
    return [m for part in done for m in part]
