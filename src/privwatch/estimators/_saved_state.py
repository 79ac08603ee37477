"""Checks of what a saved log-lift estimator holds besides its parameters: the preprocessing
of the observed columns, the prior of the sensitive values and the shapes of its networks'
weights (the caller runs them inside :func:`privwatch._serialization.reconstructing`, which
turns a failure into a :class:`~privwatch.exceptions.TamperedFileError`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._serialization import check_array
from ._lift import FloatArray
from ._preprocess import TabularPreprocessor

__all__ = ["checked_preprocessor", "checked_prior", "mlp_shapes"]


def checked_preprocessor(state: dict[str, Any]) -> TabularPreprocessor:
    """The preprocessor of a saved file, its columns, means and scales checked."""
    pre = TabularPreprocessor.from_dict(state)
    names = set(pre.numeric_) | set(pre.categories_)
    if len(pre.columns_) != len(set(pre.columns_)) or set(pre.columns_) != names:
        raise ValueError("preprocessor columns do not match its numeric and categorical parts")
    for mean, scale in pre.numeric_.values():
        if not (math.isfinite(mean) and math.isfinite(scale) and scale > 0):
            raise ValueError("preprocessor means and scales must be finite (scales positive)")
    for cats in pre.categories_.values():
        if not all(isinstance(c, str) for c in cats) or len(set(cats)) != len(cats):
            raise ValueError("preprocessor categories must be distinct strings")
    return pre


def checked_prior(path: str | Path, arrays: dict[str, Any], n_labels: int) -> FloatArray:
    """The stored ``prior`` array of a saved file, checked to be a positive pmf over the
    ``n_labels`` (at least two) sensitive labels."""
    prior = check_array(path, arrays, "prior", ndim=1, low=0.0)
    if prior.shape != (n_labels,) or not (
        n_labels >= 2 and prior.min() > 0 and abs(float(prior.sum()) - 1.0) <= 1e-9
    ):
        raise ValueError("the prior must be a positive pmf over the sensitive labels")
    return prior


def mlp_shapes(
    n_in: int, hidden: Sequence[int], n_out: int, dropout: float
) -> list[tuple[str, tuple[int, ...]]]:
    """(state-dict name, shape) of every parameter of ``privwatch._torch.mlp`` with these
    sizes, computed without building it."""
    out: list[tuple[str, tuple[int, ...]]] = []
    index, width = 0, int(n_in)
    for h in [*hidden, n_out]:
        out += [(f"{index}.weight", (int(h), width)), (f"{index}.bias", (int(h),))]
        index += 3 if dropout > 0 else 2
        width = int(h)
    return out
