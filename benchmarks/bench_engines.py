"""Counting, releasing and labelling on every engine (issue #18).

    # 100M rows, one measurement per process (peak memory from /usr/bin/time -v):
    /usr/bin/time -v python benchmarks/bench_engines.py --rows 100000000 --only sql
    /usr/bin/time -v python benchmarks/bench_engines.py --rows 100000000 --only duckdb
    /usr/bin/time -v privwatch audit /tmp/pwbench/data_100000000.parquet --engine duckdb \\
        --sensitive s --observed x1,x2,x3,x4,x5,x6 --epsilon 0.5 --out /tmp/pwbench/a100
    # the same audit (privwatch.audit.run, the engine route) timed per step: count with
    # folds, search, labelling,
    # with the hand-written count just before and just after it (ratios against their mean)
    /usr/bin/time -v python benchmarks/bench_engines.py --rows 100000000 --only steps
    # 10M rows, every engine in one run: count time, release + labelling, hashes
    python benchmarks/bench_engines.py --rows 10000000 \\
        --compare pandas,polars,duckdb,spark,postgresql

Generates a Parquet table with DuckDB (sensitive: 4 values; 6 observed integer columns of
cardinalities 4, 5, 5, 8, 10, 12 = 96,000 tuples; one float column; never committed). Times
``engines.count_table`` against a hand-written DuckDB SQL query in the same run; with
``--compare`` counts on each engine (with 5 folds, and without), searches the release once on
the first engine's count table (:func:`privwatch.release.find_release`), labels every record in
each engine (:func:`privwatch.engines.label_records`) and hashes the written scores and release
with each record's row position (``privwatch_row``), so the hash does not depend on the order
the engine wrote in. PostgreSQL: a throw-away server started with the
system's ``initdb``/``pg_ctl`` (as the test fixture does), loaded with ``COPY``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from privwatch.engines import ROW_COLUMN, count_table, label_records
from privwatch.release import find_release

CARD = (4, 5, 5, 8, 10, 12)
OBS = [f"x{i}" for i in range(1, 7)]
SENS = ["s"]
HASHED = [*(f"release_{c}" for c in OBS), "release_risk", "release_flagged"]


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
    q = f"SELECT {keys}, count(*) AS count FROM read_parquet('{path}') GROUP BY {keys}"
    out: pd.DataFrame = duckdb.connect().sql(q).df()
    return out


def digest(t: pd.DataFrame) -> str:
    return hashlib.sha256(t.to_csv(index=False).encode()).hexdigest()[:16]


def release_hash(relation: str, row: str = ROW_COLUMN) -> str:
    """Hash of the scores and release of every record with its row position (DuckDB over the
    written file): sum of hash(row position, release...) does not depend on the order the
    records were written in, and changes when any record's release or position changes."""
    cols = ", ".join(
        [f"CAST({c} AS VARCHAR)" for c in HASHED[:-2]]
        + ["CAST(release_risk AS DOUBLE)", "CAST(release_flagged AS BOOLEAN)"]
    )
    q = f"SELECT count(*), sum(hash(rn, {cols})) FROM (SELECT *, {row} AS rn FROM {relation})"
    n, h = duckdb.connect().execute(q).fetchall()[0]
    return f"{n}:{h}"


def timed(fn: Callable[..., Any], *args: Any, **kw: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    res = fn(*args, **kw)
    return res, time.perf_counter() - t0


@contextmanager
def postgres() -> Iterator[str]:
    """A throw-away PostgreSQL server (system binaries); yields its URL (password in env)."""
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    initdb, pg_ctl = (shutil.which(n) or str(bins[0] / n) for n in ("initdb", "pg_ctl"))
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    tmp = tempfile.mkdtemp(prefix="privwatch-pgbench-")
    os.chmod(tmp, 0o777)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pw = os.urandom(12).hex()
    Path(tmp, "pw").write_text(pw)
    os.chmod(Path(tmp, "pw"), 0o644)
    data = f"{tmp}/data"
    subprocess.run([*run_as, initdb, "-D", data, "-U", "privwatch", "--pwfile", f"{tmp}/pw",
                    "-A", "scram-sha-256"], check=True, capture_output=True)  # fmt: skip
    opts = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c work_mem=256MB"
    subprocess.run([*run_as, pg_ctl, "-D", data, "-o", opts, "-l", f"{tmp}/log", "-w", "start"],
                   check=True, capture_output=True)  # fmt: skip
    os.environ["PGPASSWORD"] = pw
    try:
        yield f"postgresql://privwatch@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*run_as, pg_ctl, "-D", data, "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def load_postgres(url: str, parquet: Path, work: Path) -> float:
    """COPY the Parquet table into the table ``bench`` (through a CSV DuckDB writes)."""
    import psycopg

    csv = work / "bench.csv"
    t0 = time.perf_counter()
    duckdb.sql(f"COPY (SELECT * FROM read_parquet('{parquet}')) TO '{csv}' (HEADER false)")
    with psycopg.connect(url) as con, con.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS bench")
        cur.execute(
            "CREATE TABLE bench (s integer, "
            + ", ".join(f"{c} integer" for c in OBS)
            + ", other double precision)"
        )
        with cur.copy("COPY bench FROM STDIN (FORMAT csv)") as copy, csv.open("rb") as fh:
            while block := fh.read(1 << 22):
                copy.write(block)
        cur.execute("ANALYZE bench")
    csv.unlink()
    return time.perf_counter() - t0


def postgres_release_hash(url: str, table: str, work: Path) -> str:
    import psycopg

    csv = work / "released.csv"
    cols = ", ".join([ROW_COLUMN, *HASHED])
    query = f"COPY (SELECT {cols} FROM {table}) TO STDOUT (FORMAT csv, HEADER)"
    with (
        psycopg.connect(url) as con,
        con.cursor() as cur,
        csv.open("wb") as fh,
        cur.copy(query) as cp,
    ):
        for block in cp:
            fh.write(block)
    text = ", ".join(f"'{c}': 'VARCHAR'" for c in HASHED[:-2])  # '>=2' after '3': no sniffing
    h = release_hash(f"read_csv('{csv}', types={{{text}}})")
    csv.unlink()
    return h


def compare(path: Path, engines_: list[str], epsilon: float, work: Path) -> dict[str, Any]:
    """Per engine: the count (no folds, then 5 folds, as the release uses) and the labelling of
    every record with one mapping; the release search once, on the first engine's count table
    (the search sees only the count table, so equal tables give equal releases; here without
    the held-out check, frontier and suggestions, whose cost does not depend on the engine)."""
    res: dict[str, Any] = {}
    _, res["hand_sql_s"] = timed(hand_sql, path)
    ref: pd.DataFrame | None = None
    mapping: pd.DataFrame | None = None
    for eng in engines_:
        row: dict[str, Any] = {}
        with postgres() if eng == "postgresql" else nullcontext("") as url:
            source: Any = str(path)
            kw: dict[str, Any] = {"engine": eng}
            if eng == "spark":
                from pyspark.sql import SparkSession

                (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                 .config("spark.driver.memory", "4g").getOrCreate())  # fmt: skip
            if eng == "postgresql":
                row["load_s"] = load_postgres(url, path, work)
                source, kw = url, {"table": "bench"}
            counts, row["count_s"] = timed(count_table, source, SENS, OBS, **kw)
            row["count_hash"] = digest(counts)
            folded, row["count_folds_s"] = timed(
                count_table, source, SENS, OBS, folds=5, seed=0, **kw
            )
            row["count_folds_hash"] = digest(folded)
            ref = folded if ref is None else ref
            row["count_folds_equal"] = bool(folded.equals(ref))
            if mapping is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    found, res["search_s"] = timed(
                        find_release, counts, "s", OBS, epsilon=epsilon, rng=0, folds=0,
                        suggest=False, frontier_epsilons=[], counts_column="count",
                    )  # fmt: skip
                res["search_on"] = eng
                res["satisfied"] = found.satisfied
                res["reasons"] = found.reasons
                mapping = found.mapping
                res["mapping_hash"] = digest(mapping)
            out = work / f"released_{eng}.parquet"
            target = {"write_table": "bench_released"} if eng == "postgresql" else {"out": out}
            _, row["label_s"] = timed(label_records, source, mapping, OBS, **kw, **target)
            if eng == "postgresql":
                row["release_hash"] = postgres_release_hash(url, "bench_released", work)
            else:
                files = f"'{out}/*.parquet'" if out.is_dir() else f"'{out}'"
                row["release_hash"] = release_hash(f"read_parquet({files})")
                shutil.rmtree(out) if out.is_dir() else out.unlink()
        res[eng] = row
        print(eng, json.dumps(row), flush=True)
    return res


def audit_steps(path: Path, epsilon: float, work: Path) -> dict[str, Any]:
    """The plug-in audit of ``privwatch audit --engine duckdb`` (:func:`privwatch.audit.run`,
    the engine route), timed per step: the count with folds, the release search on the count
    table, the labelling + write."""
    from privwatch.audit import run

    marks: list[tuple[str, float]] = []
    out = work / "steps_release.parquet"
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run(
            source=str(path), sensitive="s", observed=OBS, epsilon=epsilon, engine="duckdb",
            write_table=str(out), progress=lambda msg: marks.append((msg, time.perf_counter())),
        )  # fmt: skip
    end = time.perf_counter()
    names = [m for m, _ in marks] + ["end"]
    times = [t for _, t in marks] + [end]
    steps = {names[i]: times[i + 1] - times[i] for i in range(len(marks))}
    written_hash = release_hash(f"read_parquet('{out}')")
    out.unlink()
    res_d: dict[str, Any] = {"total_s": end - t0, **steps, "satisfied": res.satisfied}
    return {**res_d, "release_hash": written_hash}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--dir", default="/tmp/pwbench")
    ap.add_argument("--only", default="", help="sql or duckdb: that count alone; steps: audit")
    ap.add_argument("--compare", default="", help="comma-separated engines")
    ap.add_argument("--epsilon", type=float, default=0.5)
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"data_{a.rows}.parquet"
    generate(path, a.rows)
    if a.only == "duckdb":
        t, s = timed(count_table, str(path), SENS, OBS, engine="duckdb")
        print(json.dumps({"rows": a.rows, "duckdb_count_s": s, "rows_in_table": len(t)}))
    elif a.only == "sql":
        t, s = timed(hand_sql, path)
        print(json.dumps({"rows": a.rows, "hand_sql_s": s, "groups": len(t)}))
    elif a.only == "steps":  # the hand count just before and just after, in the same process
        _, before = timed(hand_sql, path)
        steps = audit_steps(path, a.epsilon, d)
        _, after = timed(hand_sql, path)
        hand = (before + after) / 2
        ratios = {f"{k}_ratio": v / hand for k, v in steps.items() if isinstance(v, float)}
        print(
            json.dumps({"rows": a.rows, "hand_sql_s": [before, after], **steps, **ratios}, indent=1)
        )
    elif a.compare:
        res = compare(path, a.compare.split(","), a.epsilon, d)
        print(json.dumps({"rows": a.rows, **res}, indent=1))


if __name__ == "__main__":
    main()
