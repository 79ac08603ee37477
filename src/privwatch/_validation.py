"""Validation at the public boundary: one module, one message shape.

Every message reads "`name` must <requirement>; got <value>." so users can find the argument.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .exceptions import ValidationError

__all__ = [
    "DEFAULT_ATOL",
    "check_alpha",
    "check_atol",
    "check_channel",
    "check_mask",
    "check_nonnegative",
    "check_open_fraction",
    "check_planar_points",
    "check_pmf",
    "check_positive",
    "check_positive_int",
    "check_probability",
    "check_specs",
]

#: Default tolerance on how far a pmf may sum away from 1 (or a channel row away from 1).
DEFAULT_ATOL = 1e-8


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to 80 characters, for quoting a bad value in an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_float_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """``x`` as float64; complex, boolean-free object and string input is refused (never cast)."""
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):
        raise ValidationError(
            f"`{name}` must be an array of numbers; got {short_repr(x)}."
        ) from None
    if raw.dtype.kind == "c":
        raise ValidationError(
            f"`{name}` must be an array of real numbers; got complex dtype {raw.dtype}."
        )
    if raw.dtype.kind not in "biuf" and (
        raw.dtype.kind != "O" or not all(isinstance(v, numbers.Real) for v in raw.flat)
    ):
        raise ValidationError(
            f"`{name}` must be an array of numbers; got dtype {raw.dtype} ({short_repr(x)})."
        )
    return np.asarray(raw, dtype=np.float64)


def _check_entries(arr: NDArray[np.float64], name: str) -> None:
    if arr.size == 0 or 0 in arr.shape:
        raise ValidationError(f"`{name}` must not be empty; got shape {arr.shape}.")
    finite = np.isfinite(arr)
    if not finite.all():
        bad = arr[~finite].flat[0]
        raise ValidationError(f"`{name}` must have finite entries; got {bad}.")
    with np.errstate(over="ignore"):
        total = float(arr.sum())
    if not math.isfinite(total):
        raise ValidationError(
            f"`{name}` must have a finite sum; got entries up to {float(arr.max())!r} whose "
            "sum overflows float64."
        )
    lowest = float(arr.min())
    if lowest < 0:
        raise ValidationError(f"`{name}` must have non-negative entries; got {lowest}.")


def check_pmf(
    p: ArrayLike, name: str = "p", *, ndim: int | None = 2, atol: float = DEFAULT_ATOL
) -> NDArray[np.float64]:
    """Return ``p`` as a float array after checking it is a probability mass function.

    ``ndim`` fixes the number of axes (None: any). The entries must be finite, non-negative and
    sum to 1 within ``atol``.
    """
    check_atol(atol)
    arr = _as_float_array(p, name)
    if ndim is not None and arr.ndim != ndim:
        raise ValidationError(
            f"`{name}` must be a {ndim}-dimensional array; got shape {arr.shape}."
        )
    _check_entries(arr, name)
    total = float(arr.sum())
    if abs(total - 1.0) > atol:
        raise ValidationError(
            f"`{name}` must sum to 1 (within atol={atol:g}); got a sum of {total!r}."
        )
    return arr


def check_channel(
    k: ArrayLike, name: str = "k", *, n_inputs: int | None = None, atol: float = DEFAULT_ATOL
) -> NDArray[np.float64]:
    """Return ``k`` as a row-stochastic float array ``k[x, y]`` (rows = input, columns = output)."""
    check_atol(atol)
    arr = _as_float_array(k, name)
    if arr.ndim != 2:
        raise ValidationError(f"`{name}` must be a 2-dimensional array; got shape {arr.shape}.")
    _check_entries(arr, name)
    if n_inputs is not None and arr.shape[0] != n_inputs:
        raise ValidationError(
            f"`{name}` must have {n_inputs} rows, one per input symbol; got shape {arr.shape}."
        )
    sums = arr.sum(axis=1)
    worst = int(np.argmax(np.abs(sums - 1.0)))
    if abs(sums[worst] - 1.0) > atol:
        raise ValidationError(
            f"`{name}` must have rows summing to 1 (within atol={atol:g}); "
            f"got row {worst} summing to {sums[worst]!r}."
        )
    return arr


def check_atol(atol: Any, name: str = "atol") -> float:
    """A tolerance: a non-negative finite number below 1 (NaN would disable every sum check)."""
    x = _real(atol, name, "a non-negative finite number below 1")
    if not (0.0 <= x < 1.0):
        raise ValidationError(
            f"`{name}` must be a non-negative finite number below 1; got {short_repr(atol)}."
        )
    return x


def check_mask(mask: ArrayLike, size: int, name: str = "mask") -> NDArray[np.bool_]:
    """Return ``mask`` as a boolean vector of length ``size``."""
    arr = np.asarray(mask)
    if arr.dtype.kind not in "biuf":
        raise ValidationError(f"`{name}` must be boolean; got dtype {arr.dtype}.")
    if arr.ndim != 1 or arr.shape[0] != size:
        raise ValidationError(
            f"`{name}` must be a boolean vector of length {size}; got shape {arr.shape}."
        )
    if arr.dtype != np.bool_:
        if not np.isin(arr, (0, 1)).all():
            raise ValidationError(f"`{name}` must be boolean; got dtype {arr.dtype}.")
        arr = arr.astype(bool)
    return arr


def _real(value: Any, name: str, requirement: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(f"`{name}` must be {requirement}; got {short_repr(value)}.")
    return float(value)


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """A positive number (finite unless ``allow_inf``)."""
    requirement = "a positive number" if allow_inf else "a positive finite number"
    x = _real(value, name, requirement)
    if not (x > 0) or (math.isinf(x) and not allow_inf):
        raise ValidationError(f"`{name}` must be {requirement}; got {short_repr(value)}.")
    return x


def check_nonnegative(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """A non-negative number (finite unless ``allow_inf``)."""
    requirement = "a non-negative number" if allow_inf else "a non-negative finite number"
    x = _real(value, name, requirement)
    if not (x >= 0) or (math.isinf(x) and not allow_inf):
        raise ValidationError(f"`{name}` must be {requirement}; got {short_repr(value)}.")
    return x


def check_probability(value: Any, name: str) -> float:
    """A number in [0, 1]."""
    x = _real(value, name, "a number in [0, 1]")
    if not (0.0 <= x <= 1.0):
        raise ValidationError(f"`{name}` must be a number in [0, 1]; got {short_repr(value)}.")
    return x


def check_open_fraction(value: Any, name: str) -> float:
    """A number strictly between 0 and 1 (e.g. a validation fraction)."""
    x = check_probability(value, name)
    if not 0 < x < 1:
        raise ValidationError(f"`{name}` must be in (0, 1); got {value!r}.")
    return x


def check_positive_int(value: Any, name: str) -> int:
    """A positive int (epochs, batch sizes, grid cells, ...); numpy integers are accepted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValidationError(f"`{name}` must be a positive int; got {short_repr(value)}.")
    return int(value)


def check_cost_matrix(
    matrix: ArrayLike, name: str, *, n_rows: int | None = None, rows: str = ""
) -> NDArray[np.float64]:
    """A finite non-negative 2-d cost table (distortions d[y, z], distances d[w, z]); with
    ``n_rows``, exactly that many rows (``rows`` says what one row stands for)."""
    d = _as_float_array(matrix, name)
    if (
        d.ndim != 2
        or (n_rows is not None and d.shape[0] != n_rows)
        or not np.isfinite(d).all()
        or (d < 0).any()
    ):
        shape = f"with {n_rows} rows ({rows})" if n_rows is not None else f"({rows})"
        raise ValidationError(
            f"`{name}` must be a finite non-negative array {shape}; got shape {d.shape}."
        )
    return d


def check_planar_points(
    points: ArrayLike, name: str, *, allow_empty: bool = False, unit: str = " of metres"
) -> NDArray[np.float64]:
    """A finite (n, 2) float array of planar coordinates (non-empty unless ``allow_empty``)."""
    pts = _as_float_array(points, name)
    if (
        pts.ndim != 2
        or pts.shape[1] != 2
        or (len(pts) == 0 and not allow_empty)
        or not np.isfinite(pts).all()
    ):
        size = "" if allow_empty else ", non-empty"
        raise ValidationError(
            f"`{name}` must be a finite{size} (n, 2) array{unit}; got shape {pts.shape}."
        )
    return pts


def check_alpha(alpha: Any, name: str = "alpha") -> float:
    """An order alpha in (0, inf]; alpha = 1 is the Shannon limit and alpha = inf the max limit."""
    x = _real(alpha, name, "a number in (0, inf]")
    if not (x > 0):
        raise ValidationError(f"`{name}` must be a number in (0, inf]; got {short_repr(alpha)}.")
    return x


def check_base(base: Any) -> float | None:
    """A logarithm base: None (nats), or a positive number other than 1."""
    if base is None:
        return None
    x = _real(base, "base", "None or a positive finite number other than 1")
    if not (x > 0) or x == 1 or math.isinf(x):
        raise ValidationError(
            f"`base` must be None or a positive finite number other than 1; got {short_repr(base)}."
        )
    return x


def check_specs(specs: Any, name: str) -> list[tuple[str, str]]:
    """``NAME=VALUE`` option strings (``age=3``) as ``(NAME, VALUE)`` pairs, both
    non-empty; ``name`` is the option the messages name (``bins``)."""
    if isinstance(specs, str) or not isinstance(specs, (list, tuple)):
        raise ValidationError(
            f"`{name}` must be a list of NAME=VALUE strings; got {short_repr(specs)}."
        )
    out = []
    for spec in specs:
        if not isinstance(spec, str):
            raise ValidationError(f"`{name}` must hold NAME=VALUE strings; got {short_repr(spec)}.")
        key, sep, value = spec.partition("=")
        if not sep or not key or not value:
            raise ValidationError(f"`{name}` must look like NAME=VALUE; got {spec!r}.")
        out.append((key, value))
    return out
