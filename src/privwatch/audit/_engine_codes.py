"""The engine route's count table read through its codes (issue #42 item 2).

The folded count table (``engines.count_table``: the key columns, ``fold``, ``count``) is read
by its tuples: the joint ``p[s, x]`` (:func:`table_codes`, :func:`table_joint`), the mapping's
tuples among the table's (:func:`codes_with`, for the lift columns), the number of distinct
observed tuples and each sensitive value's share of the records. Every reader takes its codes
from the table factorised once (:class:`~privwatch.release.hierarchies.KeyCodes`) where that
gives the same answer, bit for bit, and computes them itself otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..release.hierarchies import KeyCodes

__all__ = [
    "codes_with",
    "distinct_tuples",
    "integers_only",
    "raw_columns",
    "released_codes",
    "table_codes",
    "table_joint",
    "value_shares",
]


def table_codes(
    counts: pd.DataFrame, columns: list[str], keys: KeyCodes | None = None
) -> np.ndarray:
    """Each row's code of its tuple of ``columns`` as text, numbered in order of first
    appearance (column by column, then the pairs of codes: no tuple of Python objects).
    ``keys``: ``counts`` factorised once for every reader of the count table (the same
    codes)."""
    keys = keys if keys is not None and keys.frame is counts else KeyCodes(counts)
    return keys.tuple_codes(columns, raw_columns(keys, columns))


def raw_columns(keys: KeyCodes, columns: list[str]) -> list[bool]:
    """:func:`table_codes`' rule, per column of ``keys.frame``: compared as it is (integers,
    booleans and strings group as their text does: no copy to text needed), else as text
    (floats: 0.0 and -0.0 are one value but two texts; mixed objects)."""
    raw = []
    for c in columns:
        col = keys.frame[c]
        exact = col.dtype.kind in "biu" or pd.api.types.is_string_dtype(col.dtype)
        if col.dtype == object:  # only integers, only booleans (C speed), or only str
            kind = keys.inferred(c)
            exact = kind in ("integer", "boolean") or (kind == "string" and keys.only_str(c))
        raw.append(exact)
    return raw


def released_codes(
    counts: pd.DataFrame,
    keys: KeyCodes | None,
    mapping: pd.DataFrame,
    released: KeyCodes,
    observed: list[str],
) -> np.ndarray | None:
    """:func:`table_codes` of the release (``released.frame``: the released observed columns of
    each row of ``counts``), from the release's ``mapping`` (one row per observed tuple of
    ``counts``: the tuple and its ``release_<column>`` values) instead of the 1.9 M rows'
    text: each row's tuple among the mapping's (:func:`codes_with`), the mapping's released
    tuples numbered (a hundred thousand rows), then renumbered in order of first appearance
    over the rows: the same partition and numbering when every row's released tuple is its
    observed tuple's (the search labels each observed tuple once: no useful column apart).
    None when that cannot be read off (a column not of integers, a tuple the mapping lacks or
    holds twice, released columns of another dtype than the mapping's)."""
    coded = codes_with(counts, mapping, observed, keys)
    if coded is None:
        return None
    own, code_o = coded
    names = [f"release_{c}" for c in observed]
    frame = released.frame
    if len(frame) != len(counts) or any(
        n not in mapping.columns or mapping[n].dtype != frame[c].dtype
        for n, c in zip(names, observed, strict=True)
    ):
        return None
    n_x = int(own.max()) + 1 if len(own) else 0
    mine = code_o < n_x
    if np.bincount(code_o[mine], minlength=n_x).max(initial=1) != 1 or mine.sum() != n_x:
        return None  # every table tuple once in the mapping
    row_of = np.empty(n_x, dtype=np.int64)
    row_of[code_o[mine]] = np.flatnonzero(mine)
    small = KeyCodes(mapping[names].set_axis(observed, axis=1).reset_index(drop=True))
    cells = small.tuple_codes(observed, raw_columns(released, observed))[row_of[own]]
    out: np.ndarray = pd.factorize(cells)[0].astype(np.int64)
    return out


def table_joint(counts: pd.DataFrame, s_code: np.ndarray, x_code: np.ndarray) -> np.ndarray:
    """``p[s, x]`` of a count table (folds summed)."""
    p = np.zeros((s_code.max() + 1, x_code.max() + 1))
    np.add.at(p, (s_code, x_code), counts["count"].to_numpy(dtype=np.float64))
    return np.asarray(p / p.sum(), dtype=np.float64)


def integers_only(frame: pd.DataFrame, columns: list[str], keys: KeyCodes | None) -> bool:
    """Whether every column of ``frame`` holds integers only (:meth:`KeyCodes.integers`);
    ``keys``: ``frame`` factorised (its inferred types remembered)."""
    keys = keys if keys is not None and keys.frame is frame else KeyCodes(frame)
    return all(keys.integers(c) for c in columns)


def codes_with(
    counts: pd.DataFrame, other: pd.DataFrame, columns: list[str], keys: KeyCodes | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """``table_codes`` of ``counts`` followed by ``other`` (one frame, first appearance: the
    table's tuples first), from ``counts``' codes and a look-up of ``other``'s tuples, when
    every column of both holds integers; else None."""
    if keys is None or keys.frame is not counts or not columns:
        return None
    if not (integers_only(counts, columns, keys) and integers_only(other, columns, None)):
        return None
    sizes = [max(len(keys.factorized(c)[1]), 1) for c in columns]
    if float(np.prod(sizes, dtype=float)) >= 2**62:
        return None
    own = table_codes(counts, columns, keys)
    first = np.full(int(own.max()) + 1 if len(own) else 0, -1, dtype=np.int64)
    first[own[::-1]] = np.arange(len(own))[::-1]  # the first row of each tuple
    flat_t = np.zeros(len(first), dtype=np.int64)  # each tuple's mixed-radix code
    flat_o = np.zeros(len(other), dtype=np.int64)
    found = np.ones(len(other), dtype=bool)
    for c, size in zip(columns, sizes, strict=True):
        part, uniques = keys.factorized(c)
        at = pd.Index(uniques).get_indexer(pd.Index(other[c].to_numpy()))  # equal ints: one
        found &= at >= 0
        flat_t = flat_t * size + part[first]
        flat_o = flat_o * size + np.maximum(at, 0)
    code_o = np.where(found, pd.Index(flat_t).get_indexer(pd.Index(flat_o)), -1)
    novel = code_o < 0  # tuples the table lacks: numbered after its own, by first appearance
    if novel.any():
        code_o[novel] = len(first) + table_codes(other[novel].reset_index(drop=True), columns)
    return own, code_o.astype(np.int64)


def distinct_tuples(counts: pd.DataFrame, observed: list[str], keys: KeyCodes | None) -> int:
    """``len(counts[observed].drop_duplicates())``: from the table's codes when every column
    holds integers (equal values, one code), else by pandas."""
    if keys is not None and keys.frame is counts and integers_only(counts, observed, keys):
        code = keys.tuple_codes(observed, [True] * len(observed))
        return int(code.max()) + 1 if len(code) else 0
    return len(counts[observed].drop_duplicates())


def value_shares(
    counts: pd.DataFrame,
    sensitive: list[str],
    weight: np.ndarray,
    name: str,
    keys: KeyCodes | None = None,
) -> Any:
    """Each sensitive value's share of the records, largest first (the joint tuple ``a|b`` for
    several sensitive columns, as the in-memory route writes it). ``keys``: the count table
    factorised once; a single column of integers is then summed per distinct value (whole
    counts: the same sums) and labelled with their texts."""
    if (
        keys is not None
        and keys.frame is counts
        and len(sensitive) == 1
        and integers_only(counts, sensitive, keys)
        and np.all(weight == np.floor(weight))
        and float(np.abs(weight).sum()) < 2**53
    ):
        part, uniques = keys.factorized(sensitive[0])
        summed = np.bincount(part, weights=weight, minlength=len(uniques))
        per = pd.Series(summed, index=[str(u) for u in uniques]).sort_index()
        per = (per / per.sum()).sort_values(ascending=False, kind="stable")
        per.name = name
        return per
    cols = [counts[c].astype(str) for c in sensitive]  # vectorised: no per-row join
    values = cols[0].str.cat(pd.concat(cols[1:], axis=1), sep="|") if len(cols) > 1 else cols[0]
    shares = pd.Series(weight, index=values.to_numpy()).groupby(level=0).sum()
    shares = (shares / shares.sum()).sort_values(ascending=False, kind="stable")
    shares.name = name
    return shares
