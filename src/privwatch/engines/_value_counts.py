r"""The counts of values and tuples in the engine that binning needs: which observed columns are
numeric, each one's number of distinct values, a column's value counts (the quantile cut points
and the automatic nested intervals of :mod:`privwatch.engines._bins` come from them), and the
distinct tuples of the observed columns (what ``privwatch apply`` looks up in the engine).

.. math:: n(v) = |\{i : X_i = v\}|, \qquad n(x) = |\{i : (X_{i1}, \dots, X_{im}) = x\}|

One group-by (or one ``COUNT(DISTINCT ...)`` pass) in the engine each; no record passes
through Python.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ._bins import Bins, bin_frame, check_bins, codes_to_labels
from ._count import _count_frame, _count_url, _files_frame, _native_frame, canonical
from ._sources import Source, duckdb_connect, parquet_distinct_bounds, resolve
from ._sql import connect_url, quote

__all__ = ["distinct_counts", "numeric_columns", "tuple_counts", "value_counts"]


def _frame(source: Any, engine: str, table: str | None) -> tuple[Source, Any]:
    """The resolved source and, for every engine but a SQL database, its narwhals frame."""
    src = resolve(source, engine, table)
    if src.kind == "url" and src.engine == "sql":
        return src, None
    if src.kind == "url":  # duckdb:///file.db
        con = duckdb_connect(str(src.obj).removeprefix("duckdb:///"), read_only=True)
        src = Source("frame", "duckdb", con.table(str(src.table)), reason=src.reason)
    return src, _files_frame(src, False) if src.kind == "files" else _native_frame(src, False)


def _collect(frame: Any) -> pd.DataFrame:
    if isinstance(frame, nw.LazyFrame):
        frame = frame.collect(backend="pandas")
    result: pd.DataFrame = frame.to_pandas()
    return result


def _numbers(values: pd.Series) -> bool:
    """Whether a column read from a database holds numbers (ints, floats, SQL decimals; not
    booleans), at least one."""
    present = values.dropna()
    return len(present) > 0 and bool(
        present.map(
            lambda v: (
                isinstance(v, (int, float, decimal.Decimal, np.number))
                and not isinstance(v, (bool, np.bool_))
            )
        ).all()
    )


def numeric_columns(
    source: Any, columns: Sequence[str], *, engine: str = "auto", table: str | None = None
) -> list[str]:
    """Which of ``columns`` hold numbers (not booleans) in the source's schema (a database
    table: by the types of its first 1,000 rows)."""
    src, frame = _frame(source, engine, table)
    if frame is None:
        con, _ = connect_url(str(src.obj))
        name = ".".join(quote(p) for p in str(src.table).split("."))
        cols = ", ".join(quote(c) for c in columns)
        try:
            head = con.query(f"SELECT {cols} FROM {name} LIMIT 1000")
        finally:
            con.close()
        return [c for c in columns if _numbers(head[c])]
    schema = frame.collect_schema() if hasattr(frame, "collect_schema") else frame.schema
    return [c for c in columns if c in schema and schema[c].is_numeric()]


def value_counts(
    source: Any,
    column: str,
    *,
    complete: Sequence[str] = (),
    engine: str = "auto",
    table: str | None = None,
) -> pd.DataFrame:
    r"""The distinct values of a numeric ``column`` and their counts, over the records with no
    missing value in ``complete`` (nor in ``column``): one group-by in the engine.

    .. math:: n(v) = |\{i : X_i = v,\ X_i \text{ and every } C_i \text{ present}\}|

    Returns a frame ``value`` (float64, increasing), ``count`` (int64): what the quantile
    cut points of the column are computed from, as on the records themselves.
    """
    keys = list(dict.fromkeys([column, *complete]))
    src, frame = _frame(source, engine, table)
    if frame is None:
        con, _ = connect_url(str(src.obj))
        name = ".".join(quote(p) for p in str(src.table).split("."))
        where = " AND ".join(f"{quote(k)} IS NOT NULL" for k in keys)
        c = quote(column)
        try:
            raw = con.query(
                f"SELECT {c} AS value, COUNT(*) AS count FROM {name} WHERE {where} GROUP BY {c}"
            )
        finally:
            con.close()
    else:
        missing = [k for k in keys if k not in frame.columns]
        if missing:
            raise ValidationError(f"`source` has no column(s) {missing}.")
        kept = frame.filter(*(~nw.col(k).is_null() for k in keys))
        raw = _collect(kept.group_by(column).agg(nw.len().alias("count")).rename({column: "value"}))
    values = pd.to_numeric(raw["value"], errors="coerce").to_numpy(dtype=np.float64)
    counts = raw["count"].to_numpy(dtype=np.int64)
    keep = ~np.isnan(values)
    order = np.argsort(values[keep], kind="stable")
    return pd.DataFrame({"value": values[keep][order], "count": counts[keep][order]})


def tuple_counts(
    source: Any,
    columns: Sequence[str],
    *,
    bins: Bins | None = None,
    engine: str = "auto",
    table: str | None = None,
) -> pd.DataFrame:
    r"""The distinct tuples of ``columns`` (binned columns by their bins' labels, a missing
    value its own group) and their counts, :math:`n(x) = |\{i : X_i = x\}|`: one group-by in
    the engine, as :func:`~privwatch.engines.count_table` counts without a sensitive column.
    Key values are Python scalars (object columns), sorted; the column ``count`` (int64)."""
    keys = list(columns)
    if not keys or len(set(keys)) != len(keys) or "count" in keys:
        raise ValidationError(f"`columns` must be distinct names other than 'count'; got {keys}.")
    cuts = check_bins(bins, keys)
    src, frame = _frame(source, engine, table)
    if frame is None:
        raw = _count_url(src, keys, None, 0, cuts)
    else:
        missing = [k for k in keys if k not in frame.columns]
        if missing:
            raise ValidationError(f"`source` has no column(s) {missing}.")
        raw = _count_frame(bin_frame(frame, cuts), keys, None, 0)
    out = canonical(raw, keys)
    return codes_to_labels(out, cuts) if cuts else out


def distinct_counts(
    source: Any,
    columns: Sequence[str],
    *,
    complete: Sequence[str] = (),
    engine: str = "auto",
    table: str | None = None,
    at_most: int | None = None,
) -> dict[str, int]:
    """An upper bound on each column's number of distinct present values, over the records
    with no missing value in ``complete``: one pass in the engine for all columns (a missing
    value may count as one more value; a database counts exactly). ``at_most``: a column of
    Parquet files whose footers' statistics bound it by at most that many values gets that
    bound, with no pass (:func:`~._sources.parquet_distinct_bounds`); only the others are
    counted."""
    cols = list(dict.fromkeys(columns))
    if not cols:
        return {}
    src = resolve(source, engine, table)
    known: dict[str, int] = {}
    if at_most is not None and src.kind == "files":
        bounds = parquet_distinct_bounds(src.files, cols)
        known = {c: b for c, b in bounds.items() if b <= at_most}
        cols = [c for c in cols if c not in known]
        if not cols:
            return known
    src, frame = _frame(source, engine, table)
    if frame is None:
        con, _ = connect_url(str(src.obj))
        name = ".".join(quote(p) for p in str(src.table).split("."))
        where = " AND ".join(f"{quote(k)} IS NOT NULL" for k in complete) or "1 = 1"
        sel = ", ".join(f"COUNT(DISTINCT {quote(c)}) AS {quote(c)}" for c in cols)
        try:
            raw = con.query(f"SELECT {sel} FROM {name} WHERE {where}")
        finally:
            con.close()
    else:
        kept = frame.filter(*(~nw.col(k).is_null() for k in complete)) if complete else frame
        raw = _collect(kept.select(*(nw.col(c).n_unique() for c in cols)))
    return {**known, **{c: int(raw[c].iloc[0]) for c in cols}}
