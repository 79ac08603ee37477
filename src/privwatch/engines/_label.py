"""Label every record with its row of a small per-tuple mapping, streaming, in scan order.

Every labelled record carries its 0-based row position in the source (:data:`ROW`), so the
engines write in whatever order they scan and join (no global sort of the table); frames
returned to Python are sorted by it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ._bins import Bins, bin_frame, bin_sql, check_bins, labels_to_codes
from ._count import _files_frame, _native_frame, duckdb_files_sql
from ._packed import PACKED_KEY, packed_key
from ._sources import ROW, Source, check_row_free, duckdb_connect, require, resolve
from ._sql import connect_url, quote, sql_row_number

__all__ = ["label_records", "label_spark_frame"]

#: Prefix of a binned key's code column in a database join (beside the record's own column).
_BIN = "privwatch_bin_"
#: Output name -> source column (:data:`ROW` or a column of the mapping), or None for all.
Columns = Mapping[str, str] | None


def _arrow_mapping(mapping: pd.DataFrame) -> Any:
    pa = require("pyarrow")
    return pa.Table.from_pandas(mapping.reset_index(drop=True), preserve_index=False)


def _join_condition(mapping: pd.DataFrame, on: list[str], t: str = "t", m: str = "m") -> str:
    """Plain equality (hash-joinable everywhere) where the mapping has no missing key: a
    missing record value then matches nothing either way; null-safe only where needed."""
    return " AND ".join(
        f"{t}.{quote(k)} = {m}.{quote(k)}"
        if mapping[k].notna().all()
        else f"{t}.{quote(k)} IS NOT DISTINCT FROM {m}.{quote(k)}"
        for k in on
    )


def _select(
    keep: Sequence[str] | None, extra: list[str], columns: Columns, t: str = "t", m: str = "m"
) -> str:
    if columns is not None:  # exactly these, renamed: the row from the records, the rest from m
        return ", ".join(
            f"{t if v == ROW else m}.{quote(v)} AS {quote(k)}" for k, v in columns.items()
        )
    left = f"{t}.*" if keep is None else ", ".join(f"{t}.{quote(c)}" for c in [*keep, ROW])
    return ", ".join([left, *(f"{m}.{quote(c)}" for c in extra)])


def _copy_target(out: str | Path) -> str:
    fmt = "CSV, HEADER" if str(out).endswith(".csv") else "PARQUET"
    return f"TO {quote(str(out), chr(39))} (FORMAT {fmt})"


def _in_row_order(frame: pd.DataFrame, columns: Columns = None) -> pd.DataFrame:
    """A labelled frame returned to Python: sorted by the row position (small data only)."""
    row = ROW if columns is None else next((k for k, v in columns.items() if v == ROW), None)
    return frame if row is None else frame.sort_values(row, kind="stable").reset_index(drop=True)


def _label_duckdb(
    src: Source,
    mapping: pd.DataFrame,
    on: list[str],
    out: Any,
    keep: Any,
    columns: Columns,
    bins: Bins,
) -> Any:
    con = duckdb_connect()
    types: dict[str, str] = {}
    if src.kind == "files":  # read, join and write on one connection: no hand-off
        schema = con.sql(duckdb_files_sql(list(src.files), False))
        check_row_free(schema.columns)
        types = {c: str(t) for c, t in zip(schema.columns, schema.types, strict=True)}
        source = f"({duckdb_files_sql(list(src.files), True)})"
        if bins:  # each binned column replaced by its bin's code as it is read
            swap = ", ".join(f"{bin_sql(quote(c), e)} AS {quote(c)}" for c, e in bins.items())
            source = f"(SELECT * REPLACE ({swap}) FROM {source})"
    else:  # a relation of the caller's connection: streamed over as Arrow batches
        rel = bin_frame(_native_frame(src, True), bins).to_native()
        reader = getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader  # duckdb < 1.4
        con.register("src", reader())
        source = "src"
    extra = [c for c in mapping.columns if c not in on]
    condition = _join_condition(mapping, on)
    # integer keys: joined on one packed BIGINT (``_packed.py``), the same rows and values
    packed = None
    if columns is not None and not bins and PACKED_KEY not in mapping.columns:
        packed = packed_key(mapping, on, types)
    if packed is not None:
        source = f"(SELECT *, {packed[1]} AS {PACKED_KEY} FROM {source} t)"
        mapping = mapping.assign(**{PACKED_KEY: packed[0]})
        condition = f"t.{PACKED_KEY} = m.{PACKED_KEY}"
    con.register("m", _arrow_mapping(mapping))
    query = f"SELECT {_select(keep, extra, columns)} FROM {source} t LEFT JOIN m ON {condition}"
    if out is None:
        return _in_row_order(con.sql(query).df(), columns)
    con.execute("SET preserve_insertion_order = false")  # scan order: no sort, no buffering
    con.execute(f"COPY ({query}) {_copy_target(out)}")
    return None


def _label_polars(
    src: Source,
    mapping: pd.DataFrame,
    on: list[str],
    out: Any,
    keep: Any,
    columns: Columns,
    bins: Bins,
) -> Any:
    pl = require("polars")
    frame = _files_frame(src, True) if src.kind == "files" else _native_frame(src, True)
    lazy = bin_frame(frame, bins).to_native()
    lazy = lazy.lazy() if isinstance(lazy, pl.DataFrame) else lazy
    cols = [c for c in lazy.collect_schema().names() if c != ROW] if keep is None else list(keep)
    cols.append(ROW)
    m = pl.from_arrow(_arrow_mapping(mapping)).lazy()
    schema = lazy.collect_schema()
    m = m.with_columns([pl.col(k).cast(schema[k]) for k in on])
    extra = [c for c in mapping.columns if c not in on]
    chosen = [*cols, *extra]
    if columns is not None:
        chosen = [pl.col(v).alias(k) for k, v in columns.items()]
    joined = lazy.join(m, on=on, how="left", nulls_equal=True).select(chosen)
    if out is None:
        return _in_row_order(joined.collect().to_pandas(), columns)
    (joined.sink_csv if str(out).endswith(".csv") else joined.sink_parquet)(str(out))
    return None


def _label_pandas(
    src: Source,
    mapping: pd.DataFrame,
    on: list[str],
    out: Any,
    keep: Any,
    columns: Columns,
    bins: Bins,
) -> Any:
    frame = _files_frame(src, True) if src.kind == "files" else _native_frame(src, True)
    df = bin_frame(frame, bins).to_native()
    cols = [c for c in df.columns if c != ROW] if keep is None else list(keep)
    cols.append(ROW)
    m = mapping.copy()
    for k in on:  # align dtypes so that 1 and 1.0, None and NaN meet
        if m[k].notna().all():
            m[k] = m[k].astype(df[k].dtype)
        elif pd.api.types.is_numeric_dtype(df[k].dtype):
            m[k] = pd.to_numeric(m[k].astype(object).where(m[k].notna(), np.nan))
    res = df.merge(m, on=on, how="left", sort=False)  # keeps the records' order
    if columns is None:
        res = res[[*cols, *(c for c in mapping.columns if c not in on)]].reset_index(drop=True)
    else:
        res = pd.DataFrame({k: res[v].to_numpy() for k, v in columns.items()})
    if out is None:
        return res
    (res.to_csv(out, index=False) if str(out).endswith(".csv") else res.to_parquet(out))
    return None


def _spark_join(
    sdf: Any, mapping: pd.DataFrame, on: list[str], keep: Any, columns: Columns = None
) -> Any:
    """Records left-joined null-safely with ``mapping`` (the row column kept when present)."""
    from ._spark import spark_join

    return spark_join(sdf, mapping, on, keep, ROW, columns)


def label_spark_frame(sdf: Any, mapping: pd.DataFrame, on: Sequence[str]) -> Any:
    """A Spark DataFrame's records left-joined null-safely with ``mapping`` (lazy, on the
    cluster; not collected): the source's columns, then the mapping's non-key columns."""
    return _spark_join(sdf, mapping, list(on), None)


def _label_spark(
    src: Source,
    mapping: pd.DataFrame,
    on: list[str],
    out: Any,
    keep: Any,
    columns: Columns,
    bins: Bins,
) -> Any:
    frame = _files_frame(src, True) if src.kind == "files" else _native_frame(src, True)
    joined = _spark_join(bin_frame(frame, bins).to_native(), mapping, on, keep, columns)
    if out is None:
        return _in_row_order(joined.toPandas(), columns)
    writer = joined.write.mode("overwrite")
    (writer.option("header", True).csv if str(out).endswith(".csv") else writer.parquet)(str(out))
    return None


def _label_sql(
    src: Source,
    mapping: pd.DataFrame,
    on: list[str],
    out: Any,
    keep: Any,
    columns: Columns,
    write_table: Any,
    bins: Bins,
) -> Any:
    con, dialect = connect_url(str(src.obj))
    try:
        tmp = "privwatch_mapping"
        mapping.to_sql(tmp, con.conn, if_exists="replace", index=False)
        table = ".".join(quote(p) for p in str(src.table).split("."))
        extra = [c for c in mapping.columns if c not in on]
        # plain equality (hash-joinable) where the mapping has no missing key: a NULL record
        # value then matches nothing either way; the null-safe form only where it is needed
        # a binned key is joined on its bin's code, a column of its own beside the record's
        key = {k: f"{_BIN}{k}" if k in bins else k for k in on}
        coded = "".join(f", {bin_sql(quote(k), e)} AS {quote(key[k])}" for k, e in bins.items())
        cond = " AND ".join(
            f"t.{quote(key[k])} = m.{quote(k)}"
            if mapping[k].notna().all()
            else f"(t.{quote(key[k])} = m.{quote(k)} OR (t.{quote(key[k])} IS NULL AND "
            f"m.{quote(k)} IS NULL))"
            for k in on
        )
        query = (
            f"SELECT {_select(keep, extra, columns)} FROM (SELECT *, "
            f"{sql_row_number(dialect)} AS {quote(ROW)}{coded} FROM {table}) t "
            f"LEFT JOIN {quote(tmp)} m ON {cond}"
        )
        if write_table is not None:
            sqlalchemy = require("sqlalchemy")
            if sqlalchemy.inspect(con.conn).has_table(write_table):
                raise ValidationError(
                    f"`write_table` must name a new table; got {write_table!r}, which exists."
                )
            con.execute(f"CREATE TABLE {quote(write_table)} AS {query}")
            result = None
        else:
            result = _in_row_order(con.query(query), columns)
            if out is not None:
                (
                    result.to_csv(out, index=False)
                    if str(out).endswith(".csv")
                    else result.to_parquet(out)
                )
                result = None
        con.execute(f"DROP TABLE {quote(tmp)}")
        return result
    finally:
        con.close()


def label_records(
    source: Any,
    mapping: pd.DataFrame,
    on: Sequence[str],
    *,
    out: str | Path | None = None,
    engine: str = "auto",
    keep_columns: Sequence[str] | None = None,
    table: str | None = None,
    write_table: str | None = None,
    columns: Mapping[str, str] | None = None,
    bins: Bins | None = None,
) -> pd.DataFrame | None:
    """Join every record with its row of ``mapping`` (one row per distinct ``on`` tuple).

    The join runs in the engine (a left join; missing keys meet missing keys, so the None
    group of :func:`count_table` is labelled too) and is written by the engine to ``out``
    (``.parquet`` or ``.csv``) — DuckDB and Polars stream it without materialising the table
    in Python — or, for a database URL, to the new table ``write_table`` in the database.
    Written records come in the engine's scan order, not sorted (a global sort of a large
    table costs more than the count): each carries its 0-based row position in the source,
    the column ``privwatch_row`` (:data:`ROW_COLUMN`; the position :func:`count_table`'s
    folds are computed from), to restore the input order with ``ORDER BY privwatch_row``.
    Returns a pandas frame, sorted by ``privwatch_row``, only when neither is given.

    Output columns: ``keep_columns`` (default: all of the source's), ``privwatch_row``, then
    the mapping's non-key columns; records whose tuple is absent from ``mapping`` get missing
    values. ``columns`` (output name -> ``privwatch_row`` or a column of ``mapping``) picks
    and renames the output columns instead, e.g. ``{"record": "privwatch_row", "x":
    "release_x"}``: a file of the record key and released values, no column of the source.
    A source must not have a column named ``privwatch_row`` itself.

    ``bins`` (column -> increasing cut points; needs ``columns``): those key columns are
    binned in the engine (:func:`privwatch.preprocessing.bin_columns`' bins) and joined on
    their bin; ``mapping`` holds the bins' labels there (``<25``, ``[25, 45)``, ``>=45``), as
    :func:`count_table` with the same ``bins`` returns them.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"x": ["b", "a", "b"], "s": [0, 1, 1]})
    >>> m = pd.DataFrame({"x": ["a", "b"], "release": ["a", "*"]})
    >>> label_records(df, m, ["x"])["release"].tolist()
    ['*', 'a', '*']
    >>> label_records(df, m, ["x"], columns={"record": "privwatch_row", "x": "release"})
       record  x
    0       0  *
    1       1  a
    2       2  *
    """
    on = list(on)
    missing = [k for k in on if k not in mapping.columns]
    if not on or missing:
        raise ValidationError(f"`on` must name columns of `mapping`; missing {missing or on}.")
    unknown = [v for v in (columns or {}).values() if v != ROW and v not in mapping.columns]
    if unknown:
        raise ValidationError(
            f"`columns` must map to {ROW!r} or columns of `mapping`; unknown {unknown}."
        )
    if mapping.duplicated(subset=on).any():
        raise ValidationError(
            "`mapping` must have one row per distinct `on` tuple; found duplicates."
        )
    cuts = check_bins(bins, on)
    if cuts and columns is None:
        raise ValidationError("`bins` needs `columns` (the binned key columns are replaced).")
    mapping = labels_to_codes(mapping, cuts) if cuts else mapping
    src = resolve(source, engine, table)
    if src.kind == "url" and src.engine == "sql":
        return _label_sql(src, mapping, on, out, keep_columns, columns, write_table, cuts)  # type: ignore[no-any-return]
    if write_table is not None:
        raise ValidationError("`write_table` needs a database URL `source`; use `out` for files.")
    if src.kind == "url":
        con = duckdb_connect(str(src.obj).removeprefix("duckdb:///"), read_only=True)
        src = Source("frame", "duckdb", con.table(str(src.table)))
    run = {
        "duckdb": _label_duckdb,
        "polars": _label_polars,
        "pandas": _label_pandas,
        "spark": _label_spark,
    }[src.engine]
    return run(src, mapping, on, out, keep_columns, columns, cuts)  # type: ignore[no-any-return]
