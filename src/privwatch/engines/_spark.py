"""Spark: row positions without ``zipWithIndex``, the folded count and the labelling join.

Every record's 0-based row position (:data:`~privwatch.engines._count.ROW`) is computed on the
cluster, never through Python rows: for Parquet files from Spark's file metadata
(``_metadata.row_index``, plus the rows of the earlier files read from their footers), for a
DataFrame or CSV files from each record's partition and place in it
(``monotonically_increasing_id``) and the partition sizes (one count per partition, the only
thing that reaches the driver). Both give exactly the positions ``zipWithIndex`` gave, at the
cost of a plain scan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ._sources import check_row_free, require

__all__ = ["spark_files", "spark_fold", "spark_folded_count", "spark_join", "spark_with_row"]

#: ``monotonically_increasing_id`` puts the partition id above the low 33 bits.
_PART_BITS = 33


def _functions() -> Any:
    return require("pyspark.sql.functions")


def _session() -> Any:
    return require("pyspark.sql").SparkSession.builder.getOrCreate()


def _parquet_rows(files: Sequence[str]) -> list[int]:
    """Rows of each Parquet file, from its footer (no data read)."""
    pq = require("pyarrow.parquet")
    return [int(pq.ParquetFile(f).metadata.num_rows) for f in files]


def spark_files(files: Sequence[str], row: str | None) -> Any:
    """A Spark DataFrame of Parquet or CSV ``files`` (in this order), with the 0-based row
    position as column ``row`` unless it is None."""
    from functools import reduce

    spark, f = _session(), _functions()
    parquet = all(x.endswith(".parquet") for x in files)
    if not parquet:
        frames = [spark.read.csv(x, header=True, inferSchema=True) for x in files]
        frame = reduce(lambda a, b: a.unionByName(b), frames)
        return frame if row is None else spark_with_row(frame, row)
    frames = [spark.read.parquet(x) for x in files]
    if row is not None:
        for fr in frames:
            check_row_free(fr.columns)
        offsets = [0]
        for n in _parquet_rows(files)[:-1]:
            offsets.append(offsets[-1] + n)
        frames = [
            fr.select("*", (f.lit(off) + f.col("_metadata.row_index")).cast("long").alias(row))
            for fr, off in zip(frames, offsets, strict=True)
        ]
    return reduce(lambda a, b: a.unionByName(b), frames)


def spark_with_row(frame: Any, row: str) -> Any:
    """``frame`` with its records' 0-based position in its own order (partition by partition,
    as ``zipWithIndex`` numbers them) as column ``row``: one count per partition reaches the
    driver."""
    f = _functions()
    check_row_free(frame.columns)
    tagged = frame.select("*", f.monotonically_increasing_id().alias(row))
    part = f.shiftright(f.col(row), _PART_BITS)
    sizes = dict(tagged.groupBy(part.alias("p")).count().collect())
    offsets, total = [], 0
    for p in range(max(sizes, default=-1) + 1):
        offsets.append(total)
        total += int(sizes.get(p, 0))
    if not offsets:
        return tagged
    start = f.element_at(f.array(*(f.lit(o).cast("long") for o in offsets)), (part + 1).cast("int"))
    low = f.col(row).bitwiseAND(f.lit((1 << _PART_BITS) - 1))
    return tagged.withColumn(row, (start + low).cast("long"))


def spark_fold(row: str, folds: int, seed: int) -> Any:
    """:func:`~privwatch.engines.fold_of` of the Spark column ``row``, with bit operations
    (:func:`~privwatch.engines._folds.fold_bits`): the same folds as every other engine."""
    from ._folds import fold_bits

    f = _functions()
    return fold_bits(
        f.col(row), folds, seed, lambda x, m: x.bitwiseAND(m), f.shiftright, f.shiftleft
    )


def spark_folded_count(
    frame: Any, keys: list[str], fold: Any, folds: int, wide: str
) -> pd.DataFrame:
    """One group-by over ``keys`` with a count per fold (columns ``wide + k``) and the total:
    the fold column ``fold`` (a Spark column) computed once per record."""
    f = _functions()
    tagged = frame.select(*keys, fold.alias(wide))
    per_fold = [
        f.sum(f.when(f.col(wide) == k, 1).otherwise(0)).cast("long").alias(f"{wide}{k}")
        for k in range(folds)
    ]
    counted = tagged.groupBy(*keys).agg(*per_fold, f.count(f.lit(1)).alias("count"))
    out: pd.DataFrame = counted.toPandas()
    return out


def spark_join(
    sdf: Any,
    mapping: pd.DataFrame,
    on: list[str],
    keep: Any,
    row: str,
    columns: Mapping[str, str] | None = None,
) -> Any:
    """Records left-joined null-safely with the small ``mapping`` (broadcast to every
    executor: no shuffle of the records), the row column kept when present; ``columns``
    (output name -> ``row`` or a mapping column): exactly those, renamed."""
    f = _functions()
    spark = sdf.sparkSession
    m = spark.createDataFrame(mapping.astype(object).where(mapping.notna(), None))
    cond = [sdf[k].eqNullSafe(m[k]) for k in on]
    cols = [c for c in sdf.columns if c != row] if keep is None else list(keep)
    cols += [row] if row in sdf.columns else []
    extra = [c for c in mapping.columns if c not in on]
    joined = sdf.join(f.broadcast(m), on=cond, how="left")
    if columns is not None:
        return joined.select(*[(sdf if v == row else m)[v].alias(k) for k, v in columns.items()])
    return joined.select(*[sdf[c] for c in cols], *[m[c] for c in extra])
