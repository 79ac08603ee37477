"""A table's key columns factorised once: each column's distinct values and each row's index.

The engine route's folded count table (1.9 M rows of Python ints at 10^8 records) is grouped by
its observed and sensitive columns by three readers: the release search's count table (the
hierarchies and their codes, :func:`~privwatch.release.search.count_space`), the joint
``p[s, x]`` behind the tradeoff curve, and the re-identification findings. Factorising an
object column means hashing every Python object, and combining the columns' codes into a tuple
code is one more hash pass per column. :class:`KeyCodes` does each once per table and hands
every reader the arrays it would have computed itself: ``pd.factorize`` of the column
(first-appearance order), so every answer is the same bit for bit. Each reader keeps its own
rule for when a column is factorised as it is or through its text; :class:`KeyCodes` only
remembers what that rule reads (the inferred type, whether every value is a ``str``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pandas.api.types import infer_dtype
from pandas.arrays import ArrowExtensionArray

__all__ = ["KeyCodes", "distinct_values"]

IntArray = NDArray[np.int64]


def distinct_values(
    values: pd.Series, keys: KeyCodes | None = None, column: str | None = None
) -> tuple[pd.Series, IntArray] | None:
    """``values``' distinct values (first-appearance order) and each row's index among them,
    when that is exact for the text of a value (:func:`~._hierarchy.as_text`) and there are
    fewer distinct values than rows; else None.

    Exact for an integer column and for an object column of only Python ints or only strings
    (no missing value): there, equal values hash equal and have the same text, so the text of
    each row is the text of its distinct value. Mixed objects (``1``, ``1.0``, ``True`` hash
    equal but read differently) and floats (``-0.0``) take the row-by-row path. An engine's
    count table (1.9 M rows of Python ints, about a hundred distinct values per column) is the
    case it serves. ``keys`` (the table ``values`` is the column ``column`` of): its
    factorisation, computed once for every reader (no missing value here, so
    ``use_na_sentinel`` does not matter)."""
    known = keys is not None and column is not None and keys.holds(column, values)
    kind = keys.inferred(str(column)) if known and keys is not None else None
    if not (isinstance(values.dtype, np.dtype) and values.dtype.kind in "iu") and (
        values.dtype != object
        or (kind if kind is not None else infer_dtype(values, skipna=False))
        not in ("integer", "string")
    ):
        return None
    if known and keys is not None:
        inverse, uniques = keys.factorized(str(column))
    else:
        inverse, found = pd.factorize(values, use_na_sentinel=False)
        uniques = np.asarray(found)
    if len(uniques) >= len(values):
        return None
    return pd.Series(np.asarray(uniques, dtype=values.dtype)), inverse.astype(np.int64)


class KeyCodes:
    """The key columns of one frame, each factorised once (on first use).

    ``factorized(c)`` is ``pd.factorize(frame[c])``; ``text(c)`` the same of the column's text
    (``astype(str)``); ``tuple_codes(columns, raw)`` each row's tuple of ``columns`` numbered
    in order of first appearance, column ``c`` compared as it is where ``raw`` says so, else
    as text: the codes of ``code = factorize(code * n_c + part_c)`` over the columns, the
    numbering every reader of the table uses. Nothing is copied: the frame must not change
    while its codes are in use (:meth:`holds` checks that a column is still the same one)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self._factorized: dict[str, tuple[IntArray, np.ndarray]] = {}
        self._text: dict[str, tuple[IntArray, np.ndarray]] = {}
        self._inferred: dict[str, str] = {}
        self._only_str: dict[str, bool] = {}
        self._tuples: dict[tuple[tuple[str, ...], tuple[bool, ...]], IntArray] = {}

    def holds(self, column: str, values: pd.Series) -> bool:
        """Whether ``values`` is this frame's column ``column``, unchanged (same length and
        memory): only then do its codes stand for ``values``. An Arrow-backed column (the
        release's text columns) holds when both wrap the same immutable Arrow array (a copy
        of the frame, ``reset_index`` or a column selection, shares it)."""
        if column not in self.frame.columns or len(values) != len(self.frame):
            return False
        own, other = self.frame[column].array, values.array
        if isinstance(own, ArrowExtensionArray) and isinstance(other, ArrowExtensionArray):
            return own is other or own.__arrow_array__() is other.__arrow_array__()
        mine, theirs = self.frame[column].to_numpy(), values.to_numpy()
        return (
            mine.dtype == theirs.dtype
            and mine.strides == theirs.strides
            and mine.__array_interface__["data"][0] == theirs.__array_interface__["data"][0]
        )

    def factorized(self, column: str) -> tuple[IntArray, np.ndarray]:
        """``pd.factorize(frame[column])``: codes (int64) and the distinct values."""
        if column not in self._factorized:
            col = self.frame[column]
            small = _small_integers(col) if col.dtype == object and self.integers(column) else None
            if small is None:
                codes, uniques = pd.factorize(col)
                small = (codes.astype(np.int64), np.asarray(uniques))
            self._factorized[column] = small
        return self._factorized[column]

    def text(self, column: str) -> tuple[IntArray, np.ndarray]:
        """``pd.factorize(frame[column].astype(str))``."""
        if column not in self._text:
            codes, uniques = pd.factorize(self.frame[column].astype(str))
            self._text[column] = (codes.astype(np.int64), np.asarray(uniques))
        return self._text[column]

    def inferred(self, column: str) -> str:
        """``infer_dtype(frame[column], skipna=False)``."""
        if column not in self._inferred:
            self._inferred[column] = infer_dtype(self.frame[column], skipna=False)
        return self._inferred[column]

    def integers(self, column: str) -> bool:
        """Whether ``frame[column]`` holds integers only: an integer dtype, or Python ints
        (then equal values are equal numbers, and there is no missing value)."""
        col = self.frame[column]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iu":
            return True
        return bool(col.dtype == object) and self.inferred(column) == "integer"

    def only_str(self, column: str) -> bool:
        """Whether every value of ``frame[column]`` is a ``str`` (not a subclass)."""
        if column not in self._only_str:
            col = self.frame[column]
            self._only_str[column] = bool(col.map(lambda v: type(v) is str).all())
        return self._only_str[column]

    def remember(self, columns: Sequence[str], raw: Sequence[bool], codes: IntArray) -> None:
        """Keep ``codes`` as :meth:`tuple_codes` of ``columns`` and ``raw``, computed by the
        caller another way (the engine route's release, from its mapping): the caller vouches
        that they are the same numbers."""
        if len(codes) != len(self.frame):
            raise ValueError("`codes` must hold one code per row of the frame.")
        self._tuples[(tuple(columns), tuple(bool(r) for r in raw))] = codes

    def tuple_codes(self, columns: Sequence[str], raw: Sequence[bool]) -> IntArray:
        """Each row's tuple of ``columns`` (``raw[i]``: column ``i`` compared as it is, else
        as text), numbered in order of first appearance."""
        key = (tuple(columns), tuple(bool(r) for r in raw))
        if key not in self._tuples:
            cols, as_is = key
            picked = zip(cols, as_is, strict=True)
            parts = [self.factorized(c) if a else self.text(c) for c, a in picked]
            sizes = [max(len(uniques), 1) for _, uniques in parts]
            code = np.zeros(len(self.frame), dtype=np.int64)
            whole = all(not len(part) or part.min() >= 0 for part, _ in parts)  # no -1 (NA)
            if whole and float(np.prod(sizes, dtype=float)) < 2**62:
                # one factorisation of the mixed-radix code: the same partition of the rows,
                # numbered by first appearance, as renumbering after every column (a missing
                # value's -1 would carry into the next digit: the loop below, as always)
                for (part, _), size in zip(parts, sizes, strict=True):
                    code = code * size + part
                code = pd.factorize(code)[0].astype(np.int64)
            else:
                for (part, _), size in zip(parts, sizes, strict=True):
                    code = pd.factorize(code * size + part)[0].astype(np.int64)
            self._tuples[key] = code
        return self._tuples[key]


def _small_integers(values: pd.Series) -> tuple[IntArray, np.ndarray] | None:
    """``pd.factorize`` of an object column of integers (no missing value) over a small range
    of values, without hashing a Python object: the values as int64, each value's first row
    (``np.minimum.at`` over a table of the range), the distinct values numbered in the order
    of their first rows. The same codes, and as distinct values the column's own objects at
    those first rows (what ``pd.factorize`` keeps). None when a value does not fit in int64
    or the range is wider than the rows (then hashing is the cheaper way)."""
    raw = values.to_numpy()
    try:
        ints = raw.astype(np.int64)
    except (OverflowError, TypeError, ValueError):
        return None
    n = len(ints)
    if n == 0:
        return None
    lo = int(ints.min())
    span = int(ints.max()) - lo + 1
    if span > max(n, 1 << 16):
        return None
    offset = ints - lo
    first = np.full(span, n, dtype=np.int64)
    np.minimum.at(first, offset, np.arange(n, dtype=np.int64))
    firsts = np.sort(first[first < n])  # each distinct value's first row, in row order
    rank = np.empty(span, dtype=np.int64)
    rank[offset[firsts]] = np.arange(len(firsts), dtype=np.int64)
    return rank[offset], raw[firsts]
