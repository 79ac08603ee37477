"""Table plumbing of the watchdog: frames from DataFrames or arrays, flags, merged release joint."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ..exceptions import ValidationError

__all__ = [
    "as_frame_and_sensitive",
    "flags_of",
    "observed_frame",
    "release_joint",
    "safe_marker",
]

FloatArray = NDArray[np.float64]


def flags_of(keep: NDArray[np.bool_], symbols: NDArray[np.integer]) -> NDArray[np.bool_]:
    if len(symbols) == 0 or symbols.min() >= 0:
        return ~np.take(keep, symbols)
    known = symbols >= 0
    return np.asarray(~known | ~keep[np.where(known, symbols, 0)], dtype=bool)


def safe_marker(marker: str, values: Iterable[Any]) -> str:
    """A suppression marker that cannot collide with the data: ``marker`` itself when no value
    of the column equals it (compared as text too, so ``"*"`` and ``*`` in a CSV are one), else
    ``marker`` repeated until it is new (``"*"`` -> ``"**"`` -> ...). Empty strings and the
    string ``"nan"`` are ordinary values here, never treated as missing.

    >>> safe_marker("*", ["a", "*", "**"])
    '***'
    >>> safe_marker("*", ["", "nan", None])
    '*'
    >>> safe_marker("*", 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    privwatch.exceptions.ValidationError: `values` must be a collection ... got int.
    """
    if not isinstance(marker, str) or not marker:
        raise ValidationError(f"`marker` must be a non-empty string; got {marker!r}.")
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValidationError(
            f"`values` must be a collection of the column's values; got {type(values).__name__}."
        )
    taken = {str(v) for v in values}
    candidate = marker
    while candidate in taken:
        candidate += marker
    return candidate


def release_joint(p: FloatArray, keep: NDArray[np.bool_]) -> FloatArray:
    """Joint of S and the release (flagged symbols merged into one column)."""
    merged = p[:, ~keep].sum(axis=1, keepdims=True)
    q = np.hstack([p[:, keep], merged]) if (~keep).any() else p[:, keep]
    return np.asarray(q / q.sum(), dtype=np.float64)


def as_frame_and_sensitive(
    X: pd.DataFrame | ArrayLike,
    sensitive: str | None,
    y: ArrayLike | None,
    observed: Sequence[str] | None,
) -> tuple[pd.DataFrame, pd.Series, list[str]]:
    """(frame, sensitive values, observed columns) from a column name *or* ``y``, never both.

    ``sensitive`` names a column of the DataFrame ``X`` (what a ``Pipeline`` needs: the column
    travels through the earlier steps); otherwise ``y`` holds one sensitive label per record.
    ``observed`` defaults to every other column (``x0, x1, ...`` for an array).
    """
    if isinstance(y, str):
        raise ValidationError(
            f"`y` must be the sensitive labels, one per record; got the string {y!r}. To name "
            f"a column, pass it to the constructor: Watchdog(sensitive={y!r})."
        )
    if sensitive is not None:
        if y is not None:
            raise ValidationError(
                f"`y` must be None when `sensitive` names a column ({sensitive!r}); got labels "
                "too. Give the sensitive attribute once."
            )
        if not isinstance(X, pd.DataFrame):
            raise ValidationError(
                f"`X` must be a DataFrame when `sensitive` names a column ({sensitive!r}); got "
                f"{type(X).__name__}. For an array, pass the labels as fit(X, y)."
            )
        if sensitive not in X.columns:
            raise ValidationError(f"`sensitive` must name a column of the data; got {sensitive!r}.")
        cols = [c for c in X.columns if c != sensitive] if observed is None else list(observed)
        if sensitive in cols:
            raise ValidationError(
                f"`observed` must not contain the sensitive column; got {sensitive!r} in it."
            )
        return X, X[sensitive], cols
    if y is None:
        raise ValidationError(
            "`y` must be the sensitive labels (one per record) when `sensitive` is None; got "
            "None. Name a column with Watchdog(sensitive=...) or call fit(X, y)."
        )
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValidationError(f"`X` must be a DataFrame or a 2-D array; got shape {arr.shape}.")
        frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
    s_arr = np.asarray(y)
    if s_arr.ndim != 1 or len(s_arr) != len(frame):
        raise ValidationError(
            f"`y` must be one sensitive label per record ({len(frame)}); got shape {s_arr.shape}."
        )
    cols = list(frame.columns) if observed is None else list(observed)
    name = str(y.name) if isinstance(y, pd.Series) and y.name is not None else "sensitive"
    return frame, pd.Series(s_arr, name=name, index=frame.index), cols


def observed_frame(X: pd.DataFrame | ArrayLike, columns: list[str]) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.shape[1] != len(columns):
        raise ValidationError(
            f"`X` must have the {len(columns)} observed columns seen at fit time; got shape "
            f"{arr.shape}."
        )
    return pd.DataFrame(arr, columns=columns)
