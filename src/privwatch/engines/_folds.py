"""Deterministic held-out folds from a record's row position, computed alike in every engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import ValidationError

__all__ = ["fold_of"]

_M = 2**31
_SEED_STEP = 7919
_A1, _C1 = 1103515245, 12345
_A2, _C2 = 1664525, 1013904223


def _check(folds: int, seed: int) -> None:
    if isinstance(folds, bool) or not isinstance(folds, int | np.integer) or not 2 <= folds < _M:
        raise ValidationError(f"`folds` must be an integer in [2, 2**31); got {folds!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < _M:
        raise ValidationError(f"`seed` must be an integer in [0, 2**31); got {seed!r}.")


def fold_of(row_index: ArrayLike, folds: int, seed: int = 0) -> NDArray[np.int64]:
    r"""Fold of each record from its 0-based row position: the NumPy reference.

    Two rounds of a 31-bit linear congruential step with a 16-bit rotation between them, then
    the top bits modulo ``folds``. Only +, *, floor division and modulo on non-negative
    integers below :math:`2^{62}` are used, so DuckDB, Polars, pandas, Spark and SQL databases
    compute the same value (:func:`fold_expr`, :func:`fold_sql`).

    .. math:: a = ((i + 7919\,\mathrm{seed}) \bmod 2^{31}) \cdot 1103515245 + 12345 \bmod 2^{31},
              \quad b = \lfloor a / 2^{16} \rfloor + (a \bmod 2^{16})\, 2^{15},
              \quad f = \lfloor (1664525\, b + 1013904223 \bmod 2^{31}) / 2^8 \rfloor \bmod k

    Examples
    --------
    >>> fold_of([0, 1, 2, 3, 4, 5], 3, seed=0).tolist()
    [0, 2, 1, 0, 2, 1]
    """
    _check(folds, seed)
    i = np.asarray(row_index, dtype=np.int64)
    if i.size and (i.min() < 0 or i.max() >= _M):
        raise ValidationError("`row_index` must lie in [0, 2**31).")
    return np.asarray(  # the bit form: the same values, cheaper in NumPy
        fold_bits(i, folds, seed, np.bitwise_and, np.right_shift, np.left_shift), dtype=np.int64
    )


def fold_expr(row: Any, folds: int, seed: int) -> Any:
    """The same arithmetic on a narwhals integer expression (or any object with + * // %)."""
    _check(folds, seed)
    a = ((row + seed * _SEED_STEP) % _M * _A1 + _C1) % _M
    b = a // 65536 + (a % 65536) * 32768
    c = (b * _A2 + _C2) % _M
    return c // 256 % folds


def fold_bits(
    row: Any,
    folds: int,
    seed: int,
    band: Callable[[Any, int], Any],
    shr: Callable[[Any, int], Any],
    shl: Callable[[Any, int], Any],
) -> Any:
    """The same arithmetic with every power of two as a bit operation (``band``: bitwise and,
    ``shr``/``shl``: shifts): on non-negative integers ``x % 2**k == x & (2**k - 1)``,
    ``x // 2**k == x >> k`` and ``x * 2**k == x << k``, so the folds are identical; only the
    final ``% folds`` divides. For engines whose column API has no floor division (Spark)."""
    _check(folds, seed)
    a = band(band(row + seed * _SEED_STEP, _M - 1) * _A1 + _C1, _M - 1)
    b = shr(a, 16) + shl(band(a, 65535), 15)
    c = band(b * _A2 + _C2, _M - 1)
    return shr(c, 8) % folds


def fold_sql(row: str, folds: int, seed: int, int_div: str = "/") -> str:
    """The same arithmetic as SQL on a BIGINT expression.

    ``int_div`` is the dialect's integer division of non-negative integers: ``/`` in
    PostgreSQL and SQLite (it truncates on integers), ``//`` in DuckDB (whose ``/`` is real
    division)."""
    _check(folds, seed)
    if int_div not in ("/", "//"):
        raise ValidationError(f"`int_div` must be '/' or '//'; got {int_div!r}.")
    a = f"((({row} + {seed * _SEED_STEP}) % {_M}) * {_A1} + {_C1}) % {_M}"
    b = f"(({a}) {int_div} 65536 + (({a}) % 65536) * 32768)"
    c = f"(({b}) * {_A2} + {_C2}) % {_M}"
    return f"(({c}) {int_div} 256) % {folds}"
