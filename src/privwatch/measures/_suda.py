r"""SUDA special uniques: each record's minimal sample uniques (MSUs) up to a given size.

An MSU of a record is a set of its quasi-identifier values that no other record shares, none of
whose proper subsets is unique. A record with a small MSU is at risk even when the full key
is not rare: an attacker needs to know only those few values.

Elliot, Manning & Ford, *A computational algorithm for handling the special uniques problem*,
IJUFKS 10(5), 2002 (SUDA); Manning, Haglin & Keane, *A recursive search algorithm for
statistical disclosure assessment*, DMKD 16, 2008 (SUDA2, the algorithm sdcMicro's ``suda2``
and ARX's ``SUDA2`` run). privwatch enumerates the subsets of at most ``max_size`` columns
directly (the same MSUs, found without SUDA2's pruning): fine for the handful of
quasi-identifiers a release has.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import ValidationError

__all__ = ["SudaResult", "suda"]


@dataclass(frozen=True)
class SudaResult:
    """Per record: ``score`` (SUDA score), ``msu_counts[i, k - 1]`` (MSUs of size ``k``) and
    ``special`` (at least one MSU of at most ``max_size`` values)."""

    score: NDArray[np.float64]
    msu_counts: NDArray[np.int64]
    special: NDArray[np.bool_]
    max_size: int

    @property
    def n_special(self) -> int:
        """Number of special-unique records."""
        return int(self.special.sum())


def _unique_on(codes: NDArray[np.int64], cols: tuple[int, ...]) -> NDArray[np.bool_]:
    """Whether each record is alone in the sample on the columns ``cols``."""
    _, inv, counts = np.unique(
        codes[:, list(cols)], axis=0, return_inverse=True, return_counts=True
    )
    return np.asarray(counts[inv.reshape(-1)] == 1, dtype=np.bool_)


def suda(table: ArrayLike, max_size: int | None = None) -> SudaResult:
    r"""Minimal sample uniques of every record up to ``max_size`` values, and SUDA scores.

    A record's score sums, over its MSUs of size ``k``,

    .. math:: \prod_{i=k}^{M-1} (M - i) = (M - k)!,

    with ``M = max_size`` (default: the number of columns), so that a unique single value weighs
    most (Elliot et al. 2002; sdcMicro's ``suda2`` scores with ``M`` = the number of key
    variables). ``table`` is a 2-dimensional array of codes, one row per record, one column per
    quasi-identifier.

    Examples
    --------
    >>> r = suda([[0, 0], [0, 0], [1, 1]])  # the last record: two MSUs of one value each
    >>> r.score.tolist(), r.special.tolist()
    ([0.0, 0.0, 2.0], [False, False, True])
    """
    arr = np.asarray(table)
    if arr.dtype.kind not in "biufU" or arr.ndim != 2 or 0 in arr.shape:
        raise ValidationError(
            "`table` must be a non-empty 2-dimensional array of codes or strings (records x "
            "columns)."
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValidationError("`table` must hold finite codes (no NaN or infinity).")
    codes = np.column_stack(
        [np.unique(arr[:, j], return_inverse=True)[1].reshape(-1) for j in range(arr.shape[1])]
    ).astype(np.int64)
    m_cols = codes.shape[1]
    size = m_cols if max_size is None else max_size
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= m_cols:
        raise ValidationError(
            f"`max_size` must be an int from 1 to the number of columns ({m_cols}); got {size!r}."
        )
    n = codes.shape[0]
    counts = np.zeros((n, size), dtype=np.int64)
    unique_prev: dict[tuple[int, ...], NDArray[np.bool_]] = {}
    for k in range(1, size + 1):
        unique_now: dict[tuple[int, ...], NDArray[np.bool_]] = {}
        for cols in itertools.combinations(range(m_cols), k):
            uniq = _unique_on(codes, cols)
            unique_now[cols] = uniq
            minimal = uniq.copy()
            if k > 1:
                for sub in itertools.combinations(cols, k - 1):
                    minimal &= ~unique_prev[sub]
            counts[:, k - 1] += minimal
        # a superset of a unique set is unique: minimality only needs the (k - 1)-subsets,
        # provided uniqueness (not minimality) is what is carried to the next size
        unique_prev = unique_now
    weights = np.array([math.factorial(size - k) for k in range(1, size + 1)], dtype=np.float64)
    score = counts @ weights
    return SudaResult(score, counts, counts.sum(axis=1) > 0, size)
