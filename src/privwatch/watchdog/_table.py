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
    """
    if not isinstance(marker, str) or not marker:
        raise ValidationError(f"`marker` must be a non-empty string; got {marker!r}.")
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
    X: pd.DataFrame | ArrayLike, sensitive: str | ArrayLike, observed: Sequence[str] | None
) -> tuple[pd.DataFrame, pd.Series, list[str]]:
    if isinstance(X, pd.DataFrame):
        if isinstance(sensitive, str):
            if sensitive not in X.columns:
                raise ValidationError(
                    f"`sensitive` must name a column of the data; got {sensitive!r}."
                )
            s_values = X[sensitive]
            cols = [c for c in X.columns if c != sensitive] if observed is None else list(observed)
            if sensitive in cols:
                raise ValidationError(
                    f"`observed` must not contain the sensitive column; got {sensitive!r} in it."
                )
            return X, s_values, cols
        frame = X
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValidationError(f"`X` must be a DataFrame or a 2-D array; got shape {arr.shape}.")
        frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
    s_arr = np.asarray(sensitive)
    if s_arr.ndim != 1 or len(s_arr) != len(frame):
        raise ValidationError(
            f"`sensitive` must be a column name or one label per record ({len(frame)}); got "
            f"shape {s_arr.shape}."
        )
    cols = list(frame.columns) if observed is None else list(observed)
    return frame, pd.Series(s_arr, name="sensitive", index=frame.index), cols


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
