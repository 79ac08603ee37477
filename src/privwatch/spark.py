"""Audit a Spark DataFrame in place: counts as a Spark aggregation, release as a Spark join.

Only the count table (one row per observed tuple and sensitive value) is collected to the
driver; see docs/cluster.md for what is distributed and the driver's memory bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .engines import count_table, label_records, label_spark_frame
from .exceptions import ValidationError

__all__ = ["SparkAudit", "audit"]


@dataclass(frozen=True)
class SparkAudit:
    """``counts``: the collected count table; ``mapping``: one row per observed tuple (what
    ``decide`` returned, or None); ``labelled``: the Spark DataFrame of records joined with
    ``mapping`` (lazy, not collected; None without a mapping)."""

    counts: pd.DataFrame
    mapping: pd.DataFrame | None
    labelled: Any


def audit(
    spark_df: Any,
    *,
    sensitive: Sequence[str],
    observed: Sequence[str],
    decide: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
    folds: int | None = None,
    seed: int = 0,
    out: str | None = None,
) -> SparkAudit:
    """Count on the cluster, decide on the driver, label on the cluster.

    ``decide`` receives the count table and returns the per-tuple mapping (the observed
    columns plus released values, flags, scores: e.g. the watchdog or the generalisation
    search of the release layer). With ``out`` the labelled records are written as Parquet
    by Spark; otherwise ``labelled`` is returned unevaluated.
    """
    pyspark_sql = __import__("pyspark.sql", fromlist=["DataFrame"])
    if not isinstance(spark_df, pyspark_sql.DataFrame):
        raise ValidationError(
            f"`spark_df` must be a pyspark.sql.DataFrame; got {type(spark_df).__name__}."
        )
    counts = count_table(spark_df, sensitive, observed, engine="spark", folds=folds, seed=seed)
    if decide is None:
        return SparkAudit(counts, None, None)
    mapping = decide(counts)
    if out is not None:
        label_records(spark_df, mapping, list(observed), out=out, engine="spark")
        return SparkAudit(counts, mapping, None)
    return SparkAudit(counts, mapping, label_spark_frame(spark_df, mapping, list(observed)))
