"""Fast encoding of observed value tuples as integer symbols (tens of millions of rows).

Integer columns with a compact range are coded through a lookup table (one gather per row
instead of a hash lookup); other columns through pandas' hash tables. The combined key of a row
is mapped to its symbol through a dense lookup table when the key space is small enough, else
through a hash index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .exceptions import ValidationError

__all__ = ["ObservedEncoder", "factorize_sorted", "joint_counts", "require_columns"]

IntArray = NDArray[np.integer]  # int32 codes on the lookup-table path, int64 otherwise

#: Largest value range (or key space) coded through a dense lookup table.
DENSE_LIMIT = 1 << 24


def joint_counts(
    s_codes: NDArray[np.integer], x_codes: NDArray[np.integer], n_s: int, n_x: int
) -> NDArray[np.int64]:
    """Contingency table ``counts[s, x]`` of two code vectors (int64 arithmetic, no overflow)."""
    flat = s_codes.astype(np.int64) * n_x
    flat += x_codes
    return np.bincount(flat, minlength=n_s * n_x).reshape(n_s, n_x)


def require_columns(df: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValidationError(
            f"`columns` must name columns of the data; got {missing!r} (available: "
            f"{list(map(str, df.columns))!r})."
        )


def _check_no_missing(series: pd.Series, col: str) -> None:
    if series.isna().any():
        raise ValidationError(
            f"`{col}` must have no missing values; got {int(series.isna().sum())} missing "
            "(drop those rows or encode missing as its own category)."
        )


def _compact_int(series: pd.Series) -> tuple[NDArray[np.int64], int, int] | None:
    """``(values, min, max)`` of an integer column of compact range, else None."""
    if not pd.api.types.is_integer_dtype(series.dtype) or len(series) == 0:
        return None
    values = series.to_numpy(dtype=np.int64)
    lo, hi = int(values.min()), int(values.max())
    return (values, lo, hi) if hi - lo < DENSE_LIMIT else None


def factorize_sorted(series: pd.Series) -> tuple[IntArray, pd.Index, tuple[int, IntArray] | None]:
    """Codes of a column in the sorted order of its distinct values, the values, and the lookup
    table ``(offset, lut)`` when the integer fast path was taken (else None)."""
    compact = _compact_int(series)
    if compact is None:
        codes, uniques = pd.factorize(series, sort=True)
        return np.asarray(codes, dtype=np.int64), pd.Index(uniques), None
    values, lo, hi = compact
    shifted = values - lo if lo != 0 else values
    present = np.flatnonzero(np.bincount(shifted, minlength=hi - lo + 1))
    lut = np.full(hi - lo + 1, -1, dtype=np.int32)  # int32 codes: half the memory traffic
    lut[present] = np.arange(present.size)
    return np.take(lut, shifted), pd.Index(present + lo), (lo, lut)


class ObservedEncoder:
    """Encode the value tuples of observed columns as integer symbols ``0 .. n_symbols - 1``.

    Symbols follow the lexicographic order of the per-column sorted values. Missing values are
    refused, naming the column; a tuple never seen by :meth:`fit_transform` maps to ``-1``.
    """

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)

    # ------------------------------------------------------------------ per column
    def _fit_column(self, series: pd.Series) -> IntArray:
        codes, uniques, table = factorize_sorted(series)
        self.categories_.append(uniques)
        self._luts.append(table)
        return codes

    def _transform_column(self, series: pd.Series, j: int) -> IntArray:
        table = self._luts[j]
        if table is not None and pd.api.types.is_integer_dtype(series.dtype) and len(series):
            lo, lut = table
            values = series.to_numpy(dtype=np.int64)
            vmin, vmax = int(values.min()), int(values.max())
            if lo <= vmin and vmax - lo < lut.size:  # every value inside the table
                return np.take(lut, values - lo if lo != 0 else values)
            shifted = values - lo
            inside = (shifted >= 0) & (shifted < lut.size)
            return np.where(inside, lut[np.where(inside, shifted, 0)], -1)
        return np.asarray(self.categories_[j].get_indexer(pd.Index(series)), dtype=np.int64)

    def column_codes(
        self, df: pd.DataFrame, fitting: bool = False
    ) -> tuple[IntArray, list[IntArray]]:
        """Combined key of each row (-1 if any value is unseen) and the per-column codes."""
        require_columns(df, self.columns)
        per_column: list[IntArray] = []
        key: IntArray | None = None
        for j, col in enumerate(self.columns):
            series = df[col]
            _check_no_missing(series, str(col))
            codes = self._fit_column(series) if fitting else self._transform_column(series, j)
            per_column.append(codes)
            if key is None:
                key = codes.astype(np.int64)
            else:
                key *= len(self.categories_[j])
                key += codes
        assert key is not None
        if not fitting and any(len(c) and c.min() < 0 for c in per_column):
            unseen = np.zeros(len(df), dtype=bool)
            for codes in per_column:
                unseen |= codes < 0
            key[unseen] = -1
        return key, per_column

    # ------------------------------------------------------------------ tuples
    def fit_transform(self, df: pd.DataFrame) -> IntArray:
        """Fit the symbol table on ``df`` and return each row's symbol."""
        if len(self.columns) == 0:
            raise ValidationError("`observed` must name at least one column; got [].")
        require_columns(df, self.columns)
        self.categories_: list[pd.Index] = []
        self._luts: list[tuple[int, IntArray] | None] = []
        key, _ = self.column_codes(df, fitting=True)
        sizes = [len(c) for c in self.categories_]
        if float(np.prod(np.asarray(sizes, dtype=float))) >= 2.0**62:
            raise ValidationError(
                f"`observed` must have fewer than 2^62 value combinations; got sizes {sizes}."
            )
        space = int(np.prod([len(c) for c in self.categories_], dtype=float))
        if space <= DENSE_LIMIT:
            self.keys_ = np.flatnonzero(np.bincount(key, minlength=space)).astype(np.int64)
            self._key_lut: IntArray | None = np.full(space, -1, dtype=np.int32)
            self._key_lut[self.keys_] = np.arange(self.keys_.size)
            self._key_index = None
            return np.take(self._key_lut, key)
        codes, uniques = pd.factorize(key)  # hash, then sort the few distinct keys
        order = np.argsort(uniques, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        self.keys_ = np.asarray(uniques, dtype=np.int64)[order]
        self._key_lut = None
        self._key_index = pd.Index(self.keys_)
        return np.asarray(rank[codes], dtype=np.int64)

    def transform(self, df: pd.DataFrame) -> IntArray:
        """Symbols of new rows; ``-1`` for a value tuple not seen by :meth:`fit_transform`."""
        return self.symbols_of(self.column_codes(df)[0])

    def symbols_of(self, key: IntArray) -> IntArray:
        """Symbols of combined keys (from :meth:`column_codes`); -1 for unseen keys."""
        if self._key_lut is not None:
            if len(key) == 0 or key.min() >= 0:
                return np.take(self._key_lut, key)
            return np.where(key >= 0, self._key_lut[np.maximum(key, 0)], -1)
        assert self._key_index is not None
        return np.asarray(self._key_index.get_indexer(pd.Index(key)), dtype=np.int64)

    def decode(self, symbols: IntArray) -> list[IntArray]:
        """Per-column codes of symbols (the inverse of the combined key)."""
        sizes = [len(c) for c in self.categories_]
        return [np.asarray(c, dtype=np.int64) for c in np.unravel_index(self.keys_[symbols], sizes)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fitted state (the per-column values and the symbol keys)."""
        return {
            "columns": self.columns,
            "categories": [c.tolist() for c in self.categories_],
            "keys": self.keys_.tolist(),
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> ObservedEncoder:
        """Rebuild from :meth:`to_dict`; a state that :meth:`to_dict` cannot have written (a
        loaded file is untrusted) raises ``ValueError``."""
        columns, categories = state["columns"], state["categories"]
        scalar = (str, int, float, bool, type(None))
        if not (
            isinstance(columns, list)
            and isinstance(categories, list)
            and len(columns) == len(categories)
            and all(isinstance(c, scalar) for c in columns)
            and all(
                isinstance(cat, list)
                and all(isinstance(v, scalar) for v in cat)
                and len(pd.Index(cat).unique()) == len(cat)
                for cat in categories
            )
        ):
            raise ValueError("encoder state: columns and categories must be matching lists")
        keys = np.asarray(state["keys"])
        size = 1
        for cat in categories:
            size *= max(len(cat), 1)
        if (
            keys.ndim != 1
            or keys.dtype.kind not in "iu"
            or (keys.size and (int(keys.min()) < 0 or int(keys.max()) >= size))
        ):
            raise ValueError("encoder state: keys must be symbol codes within the categories")
        enc = cls(state["columns"])
        enc.categories_ = [pd.Index(v) for v in state["categories"]]
        enc._luts = [None] * len(enc.categories_)
        enc.keys_ = np.asarray(state["keys"], dtype=np.int64)
        enc._key_lut = None
        enc._key_index = pd.Index(enc.keys_)
        return enc

    @property
    def n_symbols(self) -> int:
        return len(self.keys_)

    def labels(self) -> list[tuple[Any, ...]]:
        """The value tuple of every symbol, in symbol order."""
        sizes = [len(c) for c in self.categories_]
        idx = np.unravel_index(self.keys_, sizes)
        cols = [cat.to_numpy()[i].tolist() for cat, i in zip(self.categories_, idx, strict=True)]
        return list(zip(*cols, strict=True))
