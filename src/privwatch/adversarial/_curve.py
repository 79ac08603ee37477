"""Fitting many adversarial mechanisms at once: one per point of a privacy-utility curve."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numpy.typing import ArrayLike

from .._validation import check_positive_int
from ..exceptions import ValidationError

__all__ = ["fit_many"]

Data = tuple[ArrayLike, ArrayLike, ArrayLike]


def _fit_one(model: Any, data: Data, threads: int | None) -> Any:
    if threads is not None:  # one torch thread per worker: the workers share the cores
        from ..estimators._torch_utils import require_torch

        require_torch().set_num_threads(threads)
    return model.fit(*data)


def fit_many(
    models: Sequence[Any],
    data: Data | Sequence[Data],
    *,
    n_jobs: int = 1,
    progress: bool = False,
) -> list[Any]:
    """Fit every model (e.g. one :class:`PPAN` per distortion budget delta) and return them
    fitted, in order; with ``n_jobs > 1`` the fits run in that many worker processes (joblib),
    each with one torch thread, so a 20-point curve uses every core.

    ``data`` is one ``(w, x, y)`` triple shared by all models, or one triple per model (a fresh
    draw per delta, as in Tripathy, Wang, Ishwar §III). Each model keeps its own ``rng`` and
    initial weights, so the result is the same for every ``n_jobs``.
    """
    models = list(models)
    if not models:
        raise ValidationError("`models` must hold at least one model; got none.")
    check_positive_int(n_jobs, "n_jobs")
    triples: list[Data]
    if isinstance(data, tuple) and len(data) == 3 and not isinstance(data[0], tuple):
        triples = [data] * len(models)
    else:
        triples = list(data)
        if len(triples) != len(models) or any(len(t) != 3 for t in triples):
            raise ValidationError(
                f"`data` must be one (w, x, y) triple or one per model ({len(models)}); got "
                f"{len(triples)} entries."
            )
    if n_jobs == 1:
        from rich.progress import track

        return [
            _fit_one(m, d, None)
            for m, d in track(
                list(zip(models, triples, strict=True)),
                description="fitting",
                disable=not progress,
                transient=True,
            )
        ]
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, verbose=5 if progress else 0)
    return list(parallel(delayed(_fit_one)(m, d, 1) for m, d in zip(models, triples, strict=True)))
