"""Fitting many adversarial mechanisms at once: one per point of a privacy-utility curve."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_positive_int
from ..exceptions import ValidationError
from ._stacked import can_stack, fit_stacked

__all__ = ["fit_many"]

#: ``(observed, sensitive)`` or ``(observed, sensitive, useful)`` samples of one model.
Data = tuple[ArrayLike, ...]


def _stacker(models: list[Any], samples: list[Data]) -> Callable[..., list[Any]] | None:
    """The stacked fit that can train ``models`` as one program (None: none can)."""
    from ._obfuscator_stack_fit import can_stack_obfuscators, fit_stacked_obfuscators
    from ._ppan_stacked import can_stack_continuous, fit_stacked_continuous

    if can_stack(models, samples):
        return fit_stacked
    if can_stack_continuous(models, samples):
        return fit_stacked_continuous
    if can_stack_obfuscators(models, samples):
        return fit_stacked_obfuscators
    return None


def _groups(models: list[Any], samples: list[Data]) -> list[list[int]]:
    """Indices of the models that can share one stacked program: all of them, else the
    models of one kind (estimator type, generator family, attacker), else one by one."""
    every = list(range(len(models)))
    if _stacker(models, samples) is not None:
        return [every]
    kinds: dict[Any, list[int]] = {}
    for i, m in enumerate(models):
        kind = (type(m), getattr(m, "generator", None), getattr(m, "attacker", None))
        kinds.setdefault(kind, []).append(i)
    groups: list[list[int]] = []
    for idx in kinds.values():
        if len(idx) > 1 and _stacker([models[i] for i in idx], [samples[i] for i in idx]):
            groups.append(idx)
        else:
            groups.extend([i] for i in idx)
    return groups


def _fit_chunk(models: list[Any], data: list[Data], threads: int | None) -> list[Any]:
    if threads is not None:  # one torch thread per worker: the workers share the cores
        from .._torch import torch

        torch.set_num_threads(threads)
    fit = _stacker(models, data) if len(models) > 1 else None
    if fit is not None:
        return fit(models, data)
    return [m.fit(*d) for m, d in zip(models, data, strict=True)]


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

    With ``stack=True`` (default), models of one shape and one set of settings are trained as
    ``n_jobs`` stacked programs instead of one by one: finite-alphabet PPANs (matrix or factored
    mechanism, the paper's matrix adversary, no discriminator or callbacks; they may differ in
    budget), continuous PPANs (networks given, one architecture; they may differ in budget,
    ``lam``, seed and data; see :func:`~._ppan_stacked.can_stack_continuous`) and
    :class:`Obfuscator` s (one generator family and attacker; they may differ in budget, seed
    and data of one size; see :func:`~._obfuscator_stack_fit.can_stack_obfuscators`). Models of
    several kinds are stacked kind by kind. On the CPU a stacked fit is the same arithmetic as
    the fits one by one (each model's own gradient, elementwise Adam, its own batch order and
    noise), up to float rounding, with many times fewer torch calls; on CUDA each epoch runs as
    one captured CUDA graph where it can, and the stack draws every member's batch orders and
    noise from one device generator (a graph replays them), so a CUDA stacked member is a fit
    with other draws than the same model fitted alone: equal in distribution, not equal (a
    CUDA fit repeats exactly, and graph and eager agree; tests/adversarial/test_device_stacked.py).
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
    groups = _groups(models, samples) if stack else [[i] for i in range(len(models))]
    # each stackable group: n_jobs stacked runs, one per core
    chunks: list[tuple[list[Any], list[Data]]] = []
    order: list[int] = []
    for idx in groups:
        for part in np.array_split(np.asarray(idx), min(n_jobs, len(idx))):
            chunks.append(([models[i] for i in part], [samples[i] for i in part]))
            order.extend(int(i) for i in part)
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
    fitted = [m for part in done for m in part]
    out: list[Any] = [None] * len(models)
    for i, m in zip(order, fitted, strict=True):
        out[i] = m
    return out
