"""Table plumbing of the watchdog: frames from DataFrames or arrays, flags, merged release joint."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ..exceptions import ValidationError

__all__ = ["as_frame_and_sensitive", "flags_of", "observed_frame", "release_joint"]

FloatArray = NDArray[np.float64]


def flags_of(keep: NDArray[np.bool_], symbols: NDArray[np.integer]) -> NDArray[np.bool_]:
    if len(symbols) == 0 or symbols.min() >= 0:
        return ~np.take(keep, symbols)
    known = symbols >= 0
    return np.asarray(~known | ~keep[np.where(known, symbols, 0)], dtype=bool)


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
