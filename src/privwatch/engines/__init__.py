"""Engines: the group-by count and the per-record labelling on pandas, Polars, DuckDB, Spark
and SQL databases (docs/architecture.md, layer 1b). Only the small count table comes back to
Python."""

from ._count import count_table
from ._folds import fold_of
from ._label import label_records, label_spark_frame
from ._read import MAX_COLUMNS, iter_batches, parquet_files, read_table
from ._sources import AUTO_THRESHOLD_BYTES, AUTO_THRESHOLD_ROWS, ENGINES, choose_engine
from ._sources import ROW as ROW_COLUMN
from ._value_counts import distinct_counts, numeric_columns, tuple_counts, value_counts
from ._write import write_parquet_files, write_parquet_frames

__all__ = [
    "AUTO_THRESHOLD_BYTES",
    "AUTO_THRESHOLD_ROWS",
    "ENGINES",
    "MAX_COLUMNS",
    "ROW_COLUMN",
    "choose_engine",
    "count_table",
    "distinct_counts",
    "fold_of",
    "iter_batches",
    "label_records",
    "label_spark_frame",
    "numeric_columns",
    "parquet_files",
    "read_table",
    "tuple_counts",
    "value_counts",
    "write_parquet_files",
    "write_parquet_frames",
]
