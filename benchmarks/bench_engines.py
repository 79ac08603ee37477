"""Counting and labelling on every engine (issue #18).

    python benchmarks/bench_engines.py --rows 10000000 [--db-rows 1000000] [--dir /tmp/pwbench]
    /usr/bin/time -v python benchmarks/bench_engines.py --rows N --only duckdb   # peak memory

Generates a Parquet table with DuckDB (sensitive: 4 values; 6 observed columns of
cardinalities 4, 5, 5, 8, 10, 12 = 96,000 tuples; never committed), then times
``engines.count_table`` per engine against a hand-written DuckDB SQL query in the same run,
checks that every engine returns the identical count table, and labels every record on each
engine, comparing an order-sensitive hash of the written release.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from pathlib import Path

import duckdb
import pandas as pd

from privwatch.engines import count_table, label_records

CARD = (4, 5, 5, 8, 10, 12)
OBS = [f"x{i}" for i in range(1, 7)]
SENS = ["s"]


def generate(path: Path, rows: int) -> None:
    if path.exists():
        return
    cols = ", ".join(
        f"CAST(hash(i * 7 + {k}) % {c} AS INTEGER) AS x{k + 1}" for k, c in enumerate(CARD)
    )
    duckdb.sql(
        f"COPY (SELECT CAST((hash(i) + i % 3) % 4 AS INTEGER) AS s, {cols}, random() AS other "
        f"FROM range({rows}) t(i)) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)"
    )


def hand_sql(path: Path) -> pd.DataFrame:
    keys = ", ".join([*OBS, *SENS])
    return (
        duckdb.connect()
        .sql(f"SELECT {keys}, count(*) AS count FROM read_parquet('{path}') GROUP BY {keys}")
        .df()
    )


def digest(t: pd.DataFrame) -> str:
    return hashlib.sha256(t.to_csv(index=False).encode()).hexdigest()[:16]


def label_hash(out: Path) -> str:
    """Order-sensitive hash of the written release column (row position, value)."""
    src = f"{out}/*.parquet" if out.is_dir() else str(out)
    q = (
        "SELECT sum(hash(rn, release)) FROM (SELECT row_number() OVER () AS rn, release "
        f"FROM read_parquet('{src}'))"
    )
    return str(duckdb.sql(q).fetchall()[0][0])


def timed(fn, *args, **kw):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    res = fn(*args, **kw)
    return res, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--db-rows", type=int, default=0, help="rows for Spark/PostgreSQL (0: skip)")
    ap.add_argument("--dir", default="/tmp/pwbench")
    ap.add_argument("--only", default="")
    ap.add_argument("--pg-url", default=os.environ.get("PRIVWATCH_BENCH_PG", ""))
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"data_{a.rows}.parquet"
    generate(path, a.rows)
    res: dict[str, object] = {"rows": a.rows}
    if a.only == "duckdb":
        t, s = timed(count_table, str(path), SENS, OBS, engine="duckdb")
        print(json.dumps({"rows": a.rows, "duckdb_count_s": s, "tuples": len(t)}))
        return
    if a.only == "sql":
        t, s = timed(hand_sql, path)
        print(json.dumps({"rows": a.rows, "hand_sql_s": s, "groups": len(t)}))
        return
    _, res["hand_sql_s"] = timed(hand_sql, path)
    tables = {}
    for eng in ("duckdb", "polars", "pandas"):
        tables[eng], res[f"{eng}_count_s"] = timed(count_table, str(path), SENS, OBS, engine=eng)
    res["auto_engine"] = count_table(str(path), SENS, OBS).attrs["reason"]
    res["count_hash"] = {k: digest(v) for k, v in tables.items()}
    ref = tables["duckdb"]
    res["n_tuples"] = len(ref[OBS].drop_duplicates())
    tuples = ref[OBS].drop_duplicates().reset_index(drop=True)
    mapping = tuples.assign(release=[f"r{i % 997}" for i in range(len(tuples))])
    for eng in ("duckdb", "polars"):
        out = d / f"labelled_{eng}.parquet"
        _, res[f"{eng}_label_s"] = timed(
            label_records, str(path), mapping, OBS, out=out, engine=eng
        )
        res[f"{eng}_label_hash"] = label_hash(out)
    if a.db_rows:
        small = d / f"data_{a.db_rows}.parquet"
        generate(small, a.db_rows)
        base = count_table(str(small), SENS, OBS, engine="duckdb")
        res["db_rows"] = a.db_rows
        _, res["small_duckdb_count_s"] = timed(count_table, str(small), SENS, OBS, engine="duckdb")
        _, res["small_pandas_count_s"] = timed(count_table, str(small), SENS, OBS, engine="pandas")
        from pyspark.sql import SparkSession

        (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate())
        t, res["small_spark_count_s"] = timed(count_table, str(small), SENS, OBS, engine="spark")
        res["spark_equal"] = bool(t.equals(base))
        if a.pg_url:
            import sqlalchemy

            eng_ = sqlalchemy.create_engine(
                a.pg_url.replace("postgresql://", "postgresql+psycopg://")
            )
            with eng_.begin() as c:
                c.exec_driver_sql("DROP TABLE IF EXISTS bench")
            t0 = time.perf_counter()
            pd.read_parquet(small).to_sql(
                "bench", eng_, index=False, chunksize=200_000, method="multi"
            )
            res["pg_load_s"] = time.perf_counter() - t0
            t, res["small_pg_count_s"] = timed(count_table, a.pg_url, SENS, OBS, table="bench")
            res["pg_equal"] = bool(t.equals(base))
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
