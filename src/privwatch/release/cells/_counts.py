"""The count table a release is searched on, and the sums over its rows.

Everything the search needs from the data is one count per (observed tuple, sensitive value,
fold): ``counts[t, s, k]`` (:class:`CountTable`). A released cell is a set of tuple rows: its
counts are their sum (:func:`cell_counts`), its information the entropy of the cells' sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..hierarchies import Hierarchy, KeyCodes

__all__ = [
    "CountTable",
    "cell_counts",
    "entropy_of_sizes",
    "entropy_terms",
    "first_rows",
    "group_rows",
    "row_sums",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class CountTable:
    """Distinct observed tuples with their sensitive counts per fold.

    Attributes
    ----------
    codes : int array (n_tuples, n_observed)
        Each tuple's value index in its column's hierarchy.
    counts : float array (n_tuples, n_sensitive, n_folds)
        Records per tuple, joint sensitive value and fold.
    sensitive_values : list of tuple
        The joint sensitive value of each column of ``counts``.
    useful : int array (n_tuples,) or None
        With a useful column, each tuple row is one (observed, useful) pair: its useful code.
    """

    observed: tuple[str, ...]
    sensitive: tuple[str, ...]
    codes: IntArray
    counts: FloatArray
    sensitive_values: list[tuple[str, ...]]
    useful: IntArray | None = None

    @property
    def n_records(self) -> int:
        return int(np.rint(self.counts.sum()))

    def total(self, exclude_fold: int | None = None, only_fold: int | None = None) -> FloatArray:
        """Counts summed over folds, without ``exclude_fold`` or of ``only_fold`` alone."""
        if only_fold is not None:
            return np.asarray(self.counts[:, :, only_fold], dtype=float)
        tot = self._summed
        if exclude_fold is not None:
            return np.asarray(tot - self.counts[:, :, exclude_fold], dtype=float)
        return tot.copy()  # a copy: callers may write to it

    @cached_property
    def _summed(self) -> FloatArray:
        """The counts summed over folds, once (the searches ask for them often)."""
        return np.asarray(self.counts.sum(-1), dtype=float)

    def marginals(self) -> list[IntArray]:
        """Per sensitive attribute: the attribute's code of each joint sensitive value."""
        out = []
        for a in range(len(self.sensitive)):
            _, inv = np.unique([v[a] for v in self.sensitive_values], return_inverse=True)
            out.append(inv.astype(np.int64))
        return out

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        sensitive: Sequence[str],
        observed: Sequence[str],
        hierarchies: dict[str, Hierarchy],
        *,
        folds: np.ndarray | None = None,
        n_folds: int = 1,
        useful: str | None = None,
        weights: np.ndarray | None = None,
        keys: KeyCodes | None = None,
    ) -> tuple[CountTable, IntArray]:
        """Count ``frame``; also returns each record's tuple row (to label records later).

        The tuple rows are in the order of their codes (the hierarchies' value order, then the
        useful value's), not in the order the records come in: the same records counted by
        any engine, in any order, give the same table row for row, so everything computed from
        it (the searches' tie-breaks, the held-out check's draws) is the same too. ``keys``:
        ``frame`` factorised once for every reader (:class:`~privwatch.release.hierarchies.
        KeyCodes`), the same codes."""
        parts = [hierarchies[c].codes(frame[c], keys) for c in observed]
        if useful is not None:
            parts.append(pd.factorize(frame[useful].astype(str), sort=True)[0].astype(np.int64))
        stacked = np.empty((len(frame), len(parts)), dtype=np.int64, order="F")
        for j, part in enumerate(parts):  # column by column: np.stack(parts, axis=1)'s values
            stacked[:, j] = part
        row_of, n_rows = group_rows(stacked)
        rows = stacked[first_rows(row_of, n_rows)]
        order = np.lexsort(rows.T[::-1])  # by the first column, then the next...
        rank = np.empty(n_rows, dtype=np.int64)
        rank[order] = np.arange(n_rows)
        rows, row_of = rows[order], rank[row_of]
        s_codes, s_uniques = _sensitive_codes(frame, list(sensitive), keys)
        fold = np.zeros(len(frame), dtype=np.int64) if folds is None else folds
        counts = np.zeros((len(rows), len(s_uniques), n_folds))
        w = np.ones(len(frame)) if weights is None else np.asarray(weights, dtype=float)
        np.add.at(counts, (row_of, s_codes, fold), w)
        table = cls(
            tuple(observed),
            tuple(sensitive),
            rows[:, : len(observed)].astype(np.int64),
            counts,
            s_uniques,
            rows[:, -1].astype(np.int64) if useful is not None else None,
        )
        return table, row_of.astype(np.int64)


def _sensitive_codes(
    frame: pd.DataFrame, sensitive: list[str], keys: KeyCodes | None
) -> tuple[IntArray, list[tuple[str, ...]]]:
    """Each row's joint sensitive value and those values, as text tuples in sorted order:
    ``pd.factorize(MultiIndex(frame[sensitive].astype(str)), sort=True)``. From ``keys`` when
    every sensitive column holds integers (distinct integers have distinct texts, so sorting
    the distinct values' texts and the tuples of their ranks gives the same order)."""
    ints = keys is not None and all(keys.holds(c, frame[c]) and keys.integers(c) for c in sensitive)
    if ints and keys is not None:  # the mixed-radix code of the ranks must fit in int64
        sizes = [len(keys.factorized(c)[1]) for c in sensitive]
        ints = float(np.prod(np.maximum(sizes, 1), dtype=float)) < 2**62
    if not ints or keys is None:
        sens = frame[sensitive].astype(str)
        codes, uniques = pd.factorize(pd.MultiIndex.from_frame(sens), sort=True)
        return np.asarray(codes, dtype=np.int64), [tuple(str(x) for x in v) for v in uniques]
    flat = np.zeros(len(frame), dtype=np.int64)
    texts = []
    for c in sensitive:
        part, distinct = keys.factorized(c)
        text = [str(u) for u in distinct]
        order = sorted(range(len(text)), key=text.__getitem__)
        rank = np.empty(len(text), dtype=np.int64)
        rank[order] = np.arange(len(text))
        flat = flat * len(text) + rank[part]
        texts.append([text[i] for i in order])
    size = int(np.prod([len(t) for t in texts], dtype=float))
    if size <= max(len(frame), 1 << 16):  # np.unique(flat, return_inverse=True), no sort
        seen = np.zeros(size, dtype=bool)
        seen[flat] = True
        distinct = np.flatnonzero(seen)
        rank = np.cumsum(seen) - 1
        codes = rank[flat]
    else:
        distinct, codes = np.unique(flat, return_inverse=True)
    values = []
    for f in distinct.tolist():
        ranks = []
        for t in reversed(texts):
            f, r = divmod(f, len(t))
            ranks.append(t[r])
        values.append(tuple(reversed(ranks)))
    return codes.reshape(-1).astype(np.int64), values


def first_rows(cell_of: IntArray, n_cells: int) -> IntArray:
    """Index of the first row of each cell (``cell_of`` gives the cell of every row)."""
    first = np.full(n_cells, -1, dtype=np.int64)
    first[cell_of[::-1]] = np.arange(len(cell_of))[::-1]
    return first


def entropy_terms(sizes: FloatArray, total: float) -> FloatArray:
    """-p log p of every cell of ``sizes`` records out of ``total`` (0 for an empty cell): each
    cell's additive share of the entropy of the partition."""
    p = np.asarray(sizes, dtype=float) / total
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)


def entropy_of_sizes(sizes: FloatArray, total: float) -> float:
    """Entropy (nats) of a partition of ``total`` records into cells of ``sizes``."""
    p = np.asarray(sizes, dtype=float) / total
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def row_sums(values: FloatArray) -> FloatArray:
    """``values.sum(-1)``, column by column when a 2-D array has fewer than 8 columns: the
    same bits (numpy adds fewer than 8 terms left to right, as this does) and far faster on
    the narrow count tables of a search (a reduction along a short last axis is slow)."""
    values = np.asarray(values)
    if values.ndim != 2 or not 1 <= values.shape[1] < 8:
        return np.asarray(values.sum(-1))
    out = values[:, 0].copy()
    for k in range(1, values.shape[1]):
        out += values[:, k]
    return out


def group_rows(keys: np.ndarray) -> tuple[IntArray, int]:
    """Cell index of each row of ``keys`` (n_rows, n_cols) and the number of cells."""
    if keys.shape[1] == 0:
        return np.zeros(keys.shape[0], dtype=np.int64), 1
    if keys.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), 0
    low = keys.min(0)
    radix = keys.max(0) - low + 1
    if float(np.prod(radix.astype(float))) < 2**62:
        flat = np.zeros(keys.shape[0], dtype=np.int64)
        for j in range(keys.shape[1]):
            flat = flat * int(radix[j]) + (keys[:, j] - low[j])
        inv = pd.factorize(flat)[0]  # hashing: O(n), no sort
    else:
        _, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = np.asarray(inv).reshape(-1).astype(np.int64)
    return inv, int(inv.max()) + 1


def cell_counts(cell_of: IntArray, n_cells: int, counts: FloatArray) -> FloatArray:
    """Sum the rows of ``counts`` (n_rows, ...) into ``n_cells`` cells."""
    if counts.ndim == 1:
        return np.bincount(cell_of, weights=counts, minlength=n_cells).astype(float)
    flat = counts.reshape(counts.shape[0], -1)
    out = np.empty((n_cells, flat.shape[1]))
    for k in range(flat.shape[1]):
        out[:, k] = np.bincount(cell_of, weights=flat[:, k], minlength=n_cells)
    return out.reshape((n_cells, *counts.shape[1:]))
