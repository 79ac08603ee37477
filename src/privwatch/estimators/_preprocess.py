"""Preprocessing of observed records for the neural estimators, fitted on training data only.

Numeric columns are standardized with the training mean and standard deviation; other columns
(object, category, bool, string) are one-hot encoded over the training categories (a category
unseen at fit time encodes as all zeros). The fitted state is plain JSON.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin

from .._base import check_is_fitted
from ..exceptions import ValidationError

__all__ = ["TabularPreprocessor", "as_frame"]


def as_frame(X: pd.DataFrame | ArrayLike, columns: list[str] | None = None) -> pd.DataFrame:
    """A DataFrame view of ``X``; 2-D arrays get columns ``x0, x1, ...`` (or ``columns``)."""
    if isinstance(X, pd.DataFrame):
        return X
    arr = np.asarray(X)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValidationError(f"`X` must be a DataFrame or a 2-D array; got shape {arr.shape}.")
    names = columns if columns is not None else [f"x{j}" for j in range(arr.shape[1])]
    if len(names) != arr.shape[1]:
        raise ValidationError(
            f"`X` must have the {len(names)} columns seen at fit time; got {arr.shape[1]}."
        )
    return pd.DataFrame(arr, columns=names)


def _finite(series: pd.Series, col: Any) -> NDArray[np.float64]:
    """A numeric column's values; an infinite one is refused, naming the column."""
    values = series.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValidationError(
            f"`{col}` must hold finite numbers; got {values[bad][0]} in {int(bad.sum())} "
            "record(s) (drop, cap or bin them)."
        )
    return values


class TabularPreprocessor(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Standardize numeric columns and one-hot encode the others (fitted on training data).

    A scikit-learn transformer (no parameters): ``set_output(transform="pandas")`` names the
    output columns ``col`` (numeric) and ``col=value`` (one-hot); ``y`` is ignored.
    """

    def fit(self, X: pd.DataFrame | ArrayLike, y: object = None) -> TabularPreprocessor:
        frame = as_frame(X)
        if len(frame) == 0:
            raise ValidationError("`X` must have at least one row; got 0.")
        self.columns_ = [str(c) for c in frame.columns]
        self.numeric_: dict[str, tuple[float, float]] = {}
        self.categories_: dict[str, list[Any]] = {}
        for col in frame.columns:
            series = frame[col]
            if series.isna().any():
                raise ValidationError(
                    f"`{col}` must have no missing values; got {int(series.isna().sum())} missing."
                )
            if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
                values = _finite(series, col)
                std = float(values.std())
                self.numeric_[str(col)] = (float(values.mean()), std if std > 0 else 1.0)
            else:
                self.categories_[str(col)] = sorted(pd.unique(series.astype(str)).tolist())
        return self

    @property
    def n_features_(self) -> int:
        return len(self.numeric_) + sum(len(v) for v in self.categories_.values())

    def transform(self, X: pd.DataFrame | ArrayLike) -> NDArray[np.float32]:
        check_is_fitted(self, "columns_")
        frame = as_frame(X, self.columns_ if not isinstance(X, pd.DataFrame) else None)
        missing = [c for c in self.columns_ if c not in frame.columns]
        if missing:
            raise ValidationError(f"`X` must have the columns seen at fit time; missing {missing}.")
        blocks: list[NDArray[np.float32]] = []
        for col in self.columns_:
            series = frame[col]
            if series.isna().any():
                raise ValidationError(
                    f"`{col}` must have no missing values; got {int(series.isna().sum())} missing."
                )
            if col in self.numeric_:
                mean, std = self.numeric_[col]
                values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
                if np.isnan(values).any():
                    raise ValidationError(f"`{col}` must be numeric, as at fit time.")
                values = _finite(pd.Series(values), col)
                blocks.append(((values - mean) / std).astype(np.float32)[:, None])
            else:
                cats = pd.Index(self.categories_[col])
                codes = cats.get_indexer(pd.Index(series.astype(str)))
                onehot = np.zeros((len(series), len(cats)), dtype=np.float32)
                rows = np.flatnonzero(codes >= 0)
                onehot[rows, codes[rows]] = 1.0
                blocks.append(onehot)
        return np.hstack(blocks) if blocks else np.zeros((len(frame), 0), dtype=np.float32)

    def fit_transform(
        self, X: pd.DataFrame | ArrayLike, y: object = None, **fit_params: object
    ) -> NDArray[np.float32]:
        return self.fit(X).transform(X)

    def get_feature_names_out(self, input_features: object = None) -> NDArray[np.object_]:
        """Output column names, in :meth:`transform`'s order."""
        check_is_fitted(self, "columns_")
        names: list[str] = []
        for col in self.columns_:
            cats = self.categories_.get(col)
            names += [col] if cats is None else [f"{col}={c}" for c in cats]
        return np.asarray(names, dtype=object)

    def to_dict(self) -> dict[str, Any]:
        return {"columns": self.columns_, "numeric": self.numeric_, "categories": self.categories_}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> TabularPreprocessor:
        obj = cls()
        obj.columns_ = list(state["columns"])
        obj.numeric_ = {k: (float(v[0]), float(v[1])) for k, v in state["numeric"].items()}
        obj.categories_ = {k: list(v) for k, v in state["categories"].items()}
        return obj
