"""One integer join key for a mapping keyed by integer columns (the labelling's join in DuckDB).

Labelling joins every record with its row of a small per-tuple mapping on the observed columns.
When every key of the mapping is an integer (no missing value) and every key column of the
records has an integer type, the tuple is packed into one BIGINT, mixed radix over the
mapping's ranges::

    key = (...((x_1 - lo_1) * r_2 + (x_2 - lo_2)) * r_3 + ...) + (x_k - lo_k),
    r_j = hi_j - lo_j + 1,

and a record with a value outside ``[lo_j, hi_j]`` (or a missing one) gets no key, as it matches
no row of the mapping. Within the ranges the packing is one-to-one, so the records joined on the
key are the records joined on the columns: the same rows, the same values; the hash join probes
one integer instead of ``k`` columns (each cast to the mapping's type).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._sql import quote

__all__ = ["PACKED_KEY", "packed_key"]

#: The packed key's column, in the mapping and in the records' subquery.
PACKED_KEY = "privwatch_packed_key"
#: DuckDB column types whose values all fit in a BIGINT.
_INTEGER_TYPES = (
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER",
)  # fmt: skip


def _integer_keys(mapping: pd.DataFrame, on: Sequence[str]) -> list[np.ndarray] | None:
    out = []
    for k in on:
        col = mapping[k]
        ints = isinstance(col.dtype, np.dtype) and col.dtype.kind in "iu"
        if not ints and not (
            col.dtype == object and pd.api.types.infer_dtype(col, skipna=False) == "integer"
        ):
            return None
        values = col.to_numpy()
        if values.dtype == object:  # Python (or NumPy) integers: one C pass, no int() each
            try:
                values = values.astype(np.int64)
            except OverflowError:  # beyond int64, so beyond the 2^62 bound below
                return None
        if len(values) and (values.min() < -(2**62) or values.max() >= 2**62):
            return None
        out.append(values)
    return out


def packed_key(
    mapping: pd.DataFrame, on: Sequence[str], types: dict[str, str], t: str = "t"
) -> tuple[np.ndarray, str] | None:
    """``(mapping's keys, SQL of the records' key)``: the mapping's rows packed into one
    BIGINT each and the DuckDB expression that packs a record of ``t`` the same way (NULL when
    a value lies outside the mapping's range or is missing); None when a key of the mapping is
    not an integer, a record column (``types``: column -> DuckDB type) not of an integer type,
    the mapping is empty or the packed range exceeds 2^62."""
    if not len(mapping) or not on or any(str(types.get(k)) not in _INTEGER_TYPES for k in on):
        return None
    keys = _integer_keys(mapping, on)
    if keys is None:
        return None
    lows = [int(v.min()) for v in keys]
    radix = [int(v.max()) - lo + 1 for v, lo in zip(keys, lows, strict=True)]
    if float(np.prod(radix, dtype=float)) >= 2**62:
        return None
    packed = np.zeros(len(mapping), dtype=np.int64)
    expr = "CAST(0 AS BIGINT)"
    for values, lo, r, k in zip(keys, lows, radix, on, strict=True):
        packed = packed * r + (values.astype(np.int64) - lo)
        expr = f"({expr} * {r} + (CAST({t}.{quote(k)} AS BIGINT) - ({lo})))"
    inside = " AND ".join(
        f"{t}.{quote(k)} BETWEEN {lo} AND {lo + r - 1}"
        for k, lo, r in zip(on, lows, radix, strict=True)
    )
    return packed, f"CASE WHEN {inside} THEN {expr} END"
