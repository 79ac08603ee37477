"""One group-by count of (observed tuple, sensitive value[, fold]) on any engine."""

from __future__ import annotations

import decimal
import math
from collections.abc import Sequence
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ._bins import Bins, bin_frame, bin_sql, check_bins, codes_to_labels
from ._folded import pandas_folded, polars_folded
from ._folds import fold_expr, fold_sql
from ._sources import ROW, Source, check_row_free, duckdb_connect, require, resolve
from ._sql import connect_url, quote, sql_row_number

__all__ = ["count_table"]

#: The column holding each record's 0-based row position in the source (the order of
#: :func:`count_table`'s folds): written with every labelled record by :func:`label_records`.
#: Prefix of the per-fold count columns of a wide count (never a key: see ``_check_columns``).
_WIDE = "_privwatch_fold_count_"


def duckdb_files_sql(files: Sequence[str], with_row: bool) -> str:
    """DuckDB ``SELECT`` over Parquet/CSV files, with the global 0-based row position as
    :data:`ROW` when ``with_row``: the rows of the earlier files (by name) plus the row number
    inside the file (Parquet ``file_row_number``; the CSV reader keeps file order)."""
    listing = "[" + ", ".join(quote(f, "'") for f in files) + "]"
    if not all(f.endswith(".parquet") for f in files):
        if not with_row:
            return f"SELECT * FROM read_csv({listing})"
        row = f"CAST(row_number() OVER () - 1 AS BIGINT) AS {ROW}"
        return f"SELECT *, {row} FROM read_csv({listing})"
    if not with_row:
        return f"SELECT * FROM read_parquet({listing})"
    if len(files) == 1:  # one file: its row number is the row position, no join
        return (
            f"SELECT * EXCLUDE (file_row_number), CAST(file_row_number AS BIGINT) AS {ROW} "
            f"FROM read_parquet({listing}, file_row_number=true)"
        )
    return f"""WITH sizes AS (SELECT file_name AS filename, sum(row_group_num_rows) AS n
             FROM (SELECT DISTINCT file_name, row_group_id, row_group_num_rows
                   FROM parquet_metadata({listing})) GROUP BY file_name),
        offs AS (SELECT filename, coalesce(sum(n) OVER (ORDER BY filename ROWS BETWEEN
                 UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS off FROM sizes)
        SELECT t.* EXCLUDE (filename, file_row_number),
               CAST(offs.off + t.file_row_number AS BIGINT) AS {ROW}
        FROM read_parquet({listing}, filename=true, file_row_number=true) t
        JOIN offs USING (filename)"""


def _check_columns(sensitive: Sequence[str], observed: Sequence[str]) -> list[str]:
    for name, cols in (("sensitive", sensitive), ("observed", observed)):
        if isinstance(cols, str) or not cols or not all(isinstance(c, str) for c in cols):
            raise ValidationError(
                f"`{name}` must be a non-empty list of column names; got {cols!r}."
            )
    keys = [*observed, *sensitive]
    if (
        len(set(keys)) != len(keys)
        or {"fold", "count"} & set(keys)
        or any(k.startswith(_WIDE) for k in keys)
    ):
        raise ValidationError(
            "`sensitive` and `observed` must be distinct column names other than 'fold' and "
            f"'count' (and not starting with {_WIDE!r}); got {keys!r}."
        )
    return keys


def _python_value(v: Any) -> Any:
    """One value as the Python scalar every engine agrees on (None for any missing value)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def _python_column(col: pd.Series) -> pd.Series:
    """A key column as Python scalars in an object Series, None for every missing value."""
    if col.dtype == object:
        return pd.Series([_python_value(v) for v in col.tolist()], dtype=object)
    values = col.astype(object)
    return values.where(col.notna(), None).reset_index(drop=True)


def canonical(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Key columns as Python scalars (object dtype, None for missing), rows sorted by the keys."""
    order = [*keys, *(["fold"] if "fold" in table else [])]
    try:  # sorting the engine's typed columns is fast; Python scalars sort the same way
        table = table.sort_values(order, na_position="last", kind="stable")
        sorted_ok = True
    except TypeError:
        sorted_ok = False
    out = pd.DataFrame({k: _python_column(table[k]) for k in keys})
    if "fold" in table:
        out["fold"] = table["fold"].to_numpy(dtype=np.int64)
    out["count"] = table["count"].to_numpy(dtype=np.int64)
    for col in (c for c in table.columns if str(c).startswith(_WIDE)):  # a wide count's folds
        out[col] = table[col].to_numpy(dtype=np.int64)
    if sorted_ok:
        return out
    else:  # a column mixing types that do not compare: order by (type, value)
        sort_keys = [
            out[k].map(lambda v: (v is None, type(v).__name__, v if v is not None else 0))
            for k in order
        ]
        idx = sorted(range(len(out)), key=lambda i: tuple(s.iat[i] for s in sort_keys))
        return out.iloc[idx].reset_index(drop=True)


def _files_frame(src: Source, with_row: bool) -> Any:
    files = list(src.files)
    parquet = all(f.endswith(".parquet") for f in files)
    if src.engine == "pandas":
        from ._read import read_table

        frame = pd.concat([read_table(f) for f in files], ignore_index=True)
        check_row_free(list(frame.columns), with_row)
        return nw.from_native(frame).with_row_index(ROW) if with_row else nw.from_native(frame)
    if src.engine == "polars":
        pl = require("polars")
        scan = pl.scan_parquet if parquet else pl.scan_csv
        check_row_free(scan(files).collect_schema().names(), with_row)
        lazy = scan(files, row_index_name=ROW) if with_row else scan(files)
        if with_row:
            lazy = lazy.with_columns(pl.col(ROW).cast(pl.Int64))
        return nw.from_native(lazy)
    if src.engine == "duckdb":
        con = duckdb_connect()
        check_row_free(con.sql(duckdb_files_sql(files, False)).columns, with_row)
        return nw.from_native(con.sql(duckdb_files_sql(files, with_row)))
    if src.engine == "spark":
        from ._spark import spark_files

        return nw.from_native(spark_files(files, ROW if with_row else None))
    raise ValidationError(
        f"`engine` must be pandas, polars, duckdb or spark for files; got {src.engine!r}."
    )


def _spark_frame(frame: Any, with_row: bool) -> Any:
    if not with_row:
        return nw.from_native(frame)
    from ._spark import spark_with_row

    return nw.from_native(spark_with_row(frame, ROW))


def _native_frame(src: Source, with_row: bool) -> Any:
    obj = src.obj
    if src.engine in ("pandas", "duckdb"):
        check_row_free(obj.columns, with_row)
    elif src.engine == "polars":
        check_row_free(obj.lazy().collect_schema().names(), with_row)
    if src.engine == "pandas":
        frame = nw.from_native(obj.reset_index(drop=True), eager_only=True)
        return frame.with_row_index(ROW) if with_row else frame
    if src.engine == "polars":
        pl = require("polars")
        if with_row:
            obj = obj.with_row_index(ROW).with_columns(pl.col(ROW).cast(pl.Int64))
        return nw.from_native(obj)
    if src.engine == "duckdb":
        if with_row:  # a relation's own order (as produced by its query)
            obj = obj.project(f"*, CAST(row_number() OVER () - 1 AS BIGINT) AS {ROW}")
        return nw.from_native(obj)
    return _spark_frame(obj, with_row)


def _expand_folds(wide: pd.DataFrame, keys: list[str], folds: int) -> pd.DataFrame:
    """Rows ``(keys..., fold, count)`` from a canonical wide count (one row per key, sorted,
    a count column per fold): in key-then-fold order, zero counts dropped, exactly what a
    group-by with the fold as a key gives after :func:`canonical`."""
    n = wide[[f"{_WIDE}{k}" for k in range(folds)]].to_numpy(dtype=np.int64)
    row, fold = np.nonzero(n)  # row-major: sorted by key, then fold
    # the key columns taken as one 2-D block of the same objects (a column at a time, pandas
    # copied each column and then again into its block)
    out = pd.DataFrame(wide[keys].to_numpy(dtype=object)[row], columns=keys, copy=False)
    out["fold"] = fold.astype(np.int64)
    out["count"] = n[row, fold]
    return out


def _duckdb_folded(relation: Any, keys: list[str], folds: int, seed: int) -> pd.DataFrame:
    """The folded count of a DuckDB relation in one SQL group-by over the keys alone, one
    ``count(*) FILTER (WHERE fold = k)`` per fold: the same counts as grouping by the fold
    too, with a fifth of the groups (2.7 s against 4.5 s on 10M rows, 1.5 s without folds)."""
    fold = fold_sql(quote(ROW), folds, seed, int_div="//")
    cols = ", ".join(quote(k) for k in keys)
    per_fold = ", ".join(
        f"count(*) FILTER (WHERE {quote(_WIDE)} = {k}) AS {quote(f'{_WIDE}{k}')}"
        for k in range(folds)
    )
    projected = relation.project(f"{cols}, {fold} AS {quote(_WIDE)}")
    wide: pd.DataFrame = projected.aggregate(f"{cols}, {per_fold}, count(*) AS count", cols).df()
    return wide


def _count_frame(frame: Any, keys: list[str], folds: int | None, seed: int) -> pd.DataFrame:
    group = list(keys)
    native = frame.to_native()
    if folds is not None and type(native).__name__ == "DuckDBPyRelation":
        return _duckdb_folded(native, keys, folds, seed)
    if folds is not None and type(native).__module__.startswith("pyspark"):
        from ._spark import spark_fold, spark_folded_count

        return spark_folded_count(native, keys, spark_fold(ROW, folds, seed), folds, _WIDE)
    if folds is not None and isinstance(native, pd.DataFrame):
        return pandas_folded(native, keys, ROW, folds, seed, _WIDE)
    if folds is not None and type(native).__module__.startswith("polars"):
        return polars_folded(native, keys, ROW, folds, seed, _WIDE)
    if folds is not None:
        frame = frame.with_columns(fold_expr(nw.col(ROW), folds, seed).alias("fold"))
        group.append("fold")
    counted = frame.group_by(*group, drop_null_keys=False).agg(nw.len().alias("count"))
    if isinstance(counted, nw.LazyFrame):
        counted = counted.collect(backend="pandas")
    result: pd.DataFrame = counted.to_pandas()
    return result


def _count_url(
    src: Source, keys: list[str], folds: int | None, seed: int, bins: Bins
) -> pd.DataFrame:
    con, dialect = connect_url(str(src.obj))
    cols = ", ".join(quote(k) for k in keys)
    table = ".".join(quote(part) for part in str(src.table).split("."))
    # the binned columns' codes, computed in the database as the rows are read
    exprs = ", ".join(
        f"{bin_sql(quote(k), bins[k])} AS {quote(k)}" if k in bins else quote(k) for k in keys
    )
    if folds is None:
        query = (
            f"SELECT {cols}, COUNT(*) AS count FROM (SELECT {exprs} FROM {table}) b GROUP BY {cols}"
        )
    else:  # one group per key, a count per fold (a fifth of the groups of fold-as-key)
        r, f = quote(f"{_WIDE}row"), quote(f"{_WIDE}fold")  # names no key can have
        fold = fold_sql(r, folds, seed)
        per_fold = ", ".join(
            f"COUNT(CASE WHEN {f} = {k} THEN 1 END) AS {quote(f'{_WIDE}{k}')}" for k in range(folds)
        )
        query = (
            f"SELECT {cols}, {per_fold}, COUNT(*) AS count FROM (SELECT {cols}, {fold} AS {f} FROM "
            f"(SELECT {exprs}, {sql_row_number(dialect)} AS {r} FROM {table}) t) u "
            f"GROUP BY {cols}"
        )
    try:
        raw = con.query(query)
    finally:
        con.close()
    return raw


def count_table(
    source: Any,
    sensitive: Sequence[str],
    observed: Sequence[str],
    *,
    engine: str = "auto",
    folds: int | None = None,
    seed: int = 0,
    table: str | None = None,
    bins: Bins | None = None,
) -> pd.DataFrame:
    r"""Count records per (observed tuple, sensitive value[, fold]) with one group-by.

    .. math:: n(x, s[, f]) = |\{i : X_i = x,\ S_i = s[,\ \mathrm{fold}(i) = f]\}|

    The plug-in estimate :math:`\hat p(s, x) = n(x, s)/N` is everything the watchdog and the
    generalisation search need (Hsu et al.; Sadeghi et al.); only this small table leaves the
    engine. ``fold`` is :func:`fold_of` of the record's 0-based row position.

    Parameters
    ----------
    source
        pandas or Polars DataFrame/LazyFrame, DuckDB relation, Spark DataFrame, a path or glob
        of Parquet/CSV files, or a database URL (``postgresql://``, ``sqlite:///``,
        ``duckdb:///file.db``) with ``table``.
    sensitive, observed
        Column names.
    engine
        "auto" (the engine of a frame; for files pandas up to ``AUTO_THRESHOLD_BYTES`` and
        ``AUTO_THRESHOLD_ROWS`` Parquet rows, DuckDB above), "pandas", "polars", "duckdb",
        "spark" or "sql" (database URLs).
    folds, seed
        Add a "fold" column with ``folds`` held-out folds.
    table
        Table name (``schema.table`` allowed) for a database URL.
    bins
        Numeric key columns binned in the engine (column -> increasing cut points, the bins of
        :func:`privwatch.preprocessing.bin_columns`): counted by bin, returned as the bins'
        labels (``<25``, ``[25, 45)``, ``>=45``; :mod:`privwatch.engines._bins`).

    Returns
    -------
    pandas.DataFrame
        Columns ``observed..., sensitive..., ["fold"], "count"`` (int64), sorted by the keys.
        Key values are Python scalars in object columns, so engines compare equal: integers
        come back as ``int``, floats as ``float``, strings as ``str``, booleans as ``bool``,
        exact SQL decimals as ``int``/``float``, and every missing value (NULL, NaN, NA) as
        ``None`` — its own group. ``attrs["engine"]``, ``attrs["reason"]`` state the engine
        chosen and why; ``attrs["missing"]`` maps each key column to its number of records
        with a missing value.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"s": [0, 1, 1, 0], "x": ["a", "a", "b", None]})
    >>> t = count_table(df, ["s"], ["x"])
    >>> t.values.tolist(), t.attrs["missing"]
    ([['a', 0, 1], ['a', 1, 1], ['b', 1, 1], [None, 0, 1]], {'x': 1, 's': 0})
    """
    keys = _check_columns(sensitive, observed)
    cuts = check_bins(bins, keys)
    src = resolve(source, engine, table)
    if src.kind == "url" and src.engine == "sql":
        raw = _count_url(src, keys, folds, seed, cuts)
    else:
        if src.kind == "url":  # duckdb:///file.db
            con = duckdb_connect(str(src.obj).removeprefix("duckdb:///"), read_only=True)
            src = Source("frame", "duckdb", con.table(str(src.table)), reason=src.reason)
        with_row = folds is not None
        if folds is not None:
            fold_expr(0, folds, seed)  # validate before any engine work
        frame = _files_frame(src, with_row) if src.kind == "files" else _native_frame(src, with_row)
        missing = [k for k in keys if k not in frame.columns]
        if missing:
            raise ValidationError(
                f"`source` has no column(s) {missing}; it has {list(frame.columns)}."
            )
        raw = _count_frame(bin_frame(frame, cuts), keys, folds, seed)
    out = canonical(raw, keys)
    holes = {k: int(out.loc[out[k].isna(), "count"].sum()) for k in keys}
    if folds is not None and f"{_WIDE}0" in out:  # a wide count: a column per fold
        out = _expand_folds(out, keys, folds)
    out = codes_to_labels(out, cuts) if cuts else out
    out.attrs["engine"] = src.engine
    out.attrs["reason"] = src.reason
    out.attrs["missing"] = holes
    return out
