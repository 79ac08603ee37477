"""The whole audit at scale against hand-written jobs that write the same outputs (issue #33).

    # 10^8 rows, DuckDB: the hand folded count, the audit with --no-records, the audit with
    # records, the hand same-outputs job, the hand folded count again (one process each,
    # /usr/bin/time for wall and peak RSS; every ratio against its reference in the same run)
    python benchmarks/bench_scale.py --rows 100000000 --engine duckdb --dir /tmp/pw33
    python benchmarks/bench_scale.py --rows 10000000 --engine polars
    python benchmarks/bench_scale.py --rows 10000000 --engine pandas --glob  # engine route
    python benchmarks/bench_scale.py --rows 10000000 --engine spark       # local[2]
    # issue #42 item 5: what --engine auto picks for 5,000,000 Parquet rows (DuckDB; the route,
    # engine and reason are in each audit job's result)
    python benchmarks/bench_scale.py --rows 5000000 --engine auto
    # the learned route's memory: --estimator classifier at 10^6 and 10^7 rows (peak RSS)
    python benchmarks/bench_scale.py --rows 1000000 10000000 --classifier --glob

The references (written by hand, in the engine's own language):

* **hand folded count**: the per-tuple counts by fold, one ``GROUP BY`` over the keys with
  ``count(*) FILTER (WHERE fold = k)`` per fold, the fold computed from ``file_row_number``
  with the same arithmetic as :func:`privwatch.engines.fold_of`, fetched to pandas.
* **hand same-outputs job**: the hand folded count, then the audit's two record files (issue
  #42): ``release.parquet`` (the row position as ``record`` and one released column per observed
  column) and ``scores.parquet`` (``record`` and every per-tuple score of the mapping, the
  per-value ``log_lift[<value>]`` columns included, as the audit writes it), each a left
  join of the input with the audit's mapping (the observed tuple and its ``release_*``
  columns), written by ``COPY``.
* Spark: the same two in PySpark (row position from ``_metadata.row_index``, the fold with
  column bit operations, ``groupBy().agg`` with a sum per fold, a broadcast join written with
  ``DataFrame.write.parquet``).

The written files are hashed by the parent process after each job, outside the job's wall,
CPU and peak RSS. The audit runs the command line in-process (``privwatch audit ... --json``)
with timers around ``engines.count_table``, ``engines.label_records`` and the release search's
held-out check, so its held-out share is measured in the audit itself. Hashes: the folded
count table (sha256 of its CSV, the audit's own table), ``sum(hash(record, x1..x6))`` of the
written release and ``sum(hash(every column))`` of the written scores, equal between the
audit and the hand job and between engines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from bench_engines import generate

OBS = [f"x{i}" for i in range(1, 7)]
KEYS = ", ".join([*OBS, "s"])
FOLDS = 5
EPSILON = 0.5
SPARK_ENV = {"PYSPARK_SUBMIT_ARGS": "--master local[2] --driver-memory 4g pyspark-shell"}


def fold_sql(row: str) -> str:
    """The fold of ``fold_of`` (seed 0) written out in DuckDB SQL, as a user would."""
    a = f"((({row} % 2147483648) * 1103515245 + 12345) % 2147483648)"
    b = f"({a} // 65536 + ({a} % 65536) * 32768)"
    return f"((({b} * 1664525 + 1013904223) % 2147483648) // 256 % {FOLDS})"


def hand_count_duckdb(path: str) -> pd.DataFrame:
    per = ", ".join(f"count(*) FILTER (WHERE f = {k}) AS n{k}" for k in range(FOLDS))
    q = (
        f"SELECT {KEYS}, {per} FROM (SELECT {KEYS}, {fold_sql('file_row_number')} AS f "
        f"FROM read_parquet('{path}', file_row_number=true)) GROUP BY {KEYS}"
    )
    out: pd.DataFrame = duckdb.sql(q).df()
    return out


def scores_of(mapping: str) -> list[str]:
    """The per-tuple scores of the audit's mapping (``release_<name>``, every one but the
    released observed columns, in the mapping's order: ``log_lift[<value>]``, risk, flagged,
    suppressed, released_cell_log_lift, advice_column, advice_risk), as the audit writes them
    to scores.parquet."""
    names = pq.read_schema(mapping).names
    released = {f"release_{c}" for c in OBS}
    return [
        n.removeprefix("release_") for n in names if n.startswith("release_") and n not in released
    ]


def hand_same_duckdb(path: str, mapping: str, out: str) -> None:
    """The reference: the folded count, then the audit's two record files in the folder
    ``out``: the release (the row position as ``record``, one released column per observed
    column) and the scores (``record`` and the mapping's scores)."""
    hand_count_duckdb(path)
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    Path(out).mkdir()
    for name, cols in (("release", OBS), ("scores", scores_of(mapping))):
        picked = ", ".join(f'm."release_{c}" AS "{c}"' for c in cols)
        con.execute(
            f"COPY (SELECT t.file_row_number AS record, {picked} "
            f"FROM read_parquet('{path}', file_row_number=true) t "
            f"LEFT JOIN read_parquet('{mapping}') m USING ({', '.join(OBS)})) "
            f"TO '{out}/{name}.parquet' (FORMAT parquet)"
        )


def _spark() -> Any:
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def hand_count_spark(path: str) -> pd.DataFrame:
    from pyspark.sql import functions as F

    df = _spark().read.parquet(path)
    r = F.col("_metadata.row_index")
    a = ((r.bitwiseAND(2**31 - 1)) * 1103515245 + 12345).bitwiseAND(2**31 - 1)
    b = F.shiftright(a, 16) + F.shiftleft(a.bitwiseAND(65535), 15)
    fold = F.shiftright((b * 1664525 + 1013904223).bitwiseAND(2**31 - 1), 8) % FOLDS
    per = [F.sum(F.when(F.col("f") == k, 1).otherwise(0)).alias(f"n{k}") for k in range(FOLDS)]
    out: pd.DataFrame = (
        df.select(*OBS, "s", fold.alias("f")).groupBy(*OBS, "s").agg(*per).toPandas()
    )
    return out


def hand_same_spark(path: str, mapping: str, out: str) -> None:
    from pyspark.sql import functions as F

    hand_count_spark(path)
    spark = _spark()
    m = spark.read.parquet(mapping)
    df = spark.read.parquet(path).select(*OBS, F.col("_metadata.row_index").alias("record"))
    joined = df.join(F.broadcast(m), on=OBS, how="left")
    for name, cols in (("release", OBS), ("scores", scores_of(mapping))):
        picked = [F.col(f"`release_{c}`").alias(c) for c in cols]
        joined.select("record", *picked).write.mode("overwrite").parquet(f"{out}/{name}.parquet")


def digest(t: pd.DataFrame) -> str:
    return hashlib.sha256(t.to_csv(index=False).encode()).hexdigest()[:16]


def release_hash(out: str) -> str:
    """``count:sum(hash(record, x1..x6))`` of the release written to the folder ``out``
    (``release.parquet``: a file, or Spark's folder of parts; any order)."""
    path = Path(out) / "release.parquet"
    files = f"{path}/*.parquet" if path.is_dir() else str(path)
    cols = ", ".join(f"CAST({c} AS VARCHAR)" for c in OBS)
    q = f"SELECT count(*), sum(hash(record, {cols})) FROM read_parquet('{files}')"
    n, h = duckdb.sql(q).fetchall()[0]
    return f"{n}:{h}"


def scores_hash(out: str) -> str:
    """``columns:count:sum(hash(every column as text))`` of the scores in the folder ``out``
    (any order): the audit's and the hand job's scores files must hold the same content."""
    path = Path(out) / "scores.parquet"
    files = f"{path}/*.parquet" if path.is_dir() else str(path)
    names = [r[0] for r in duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{files}')").fetchall()]
    cols = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in names)
    n, h = duckdb.sql(
        f"SELECT count(*), sum(hash({cols})) FROM read_parquet('{files}')"
    ).fetchall()[0]
    return f"{len(names)}:{n}:{h}"


def job_audit(a: argparse.Namespace) -> dict[str, Any]:
    """The command line in-process, with timers around its steps."""
    import privwatch.engines as eng
    import privwatch.release.search._one_search as fitter
    from privwatch.cli import app

    timers: dict[str, float] = {"count_s": 0.0, "label_s": 0.0, "held_out_s": 0.0}
    seen: dict[str, Any] = {}

    def timed(name: str, fn: Any, keep: Any = None) -> Any:
        def wrapper(*args: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                res = fn(*args, **kw)
            finally:
                timers[name] += time.perf_counter() - t0
            if keep is not None:
                keep(args, kw, res)
            return res

        return wrapper

    def keep_count(args: Any, kw: Any, res: Any) -> None:
        seen["count_hash"] = digest(res)

    def keep_mapping(args: Any, kw: Any, res: Any) -> None:
        args[1].to_parquet(Path(a.work) / "mapping.parquet")

    eng.count_table = timed("count_s", eng.count_table, keep_count)
    eng.label_records = timed("label_s", eng.label_records, keep_mapping)
    # a check is made in two steps (its point estimate, then, when asked, its interval)
    check = fitter.HeldOutCheck
    check.__init__ = timed("held_out_s", check.__init__)  # type: ignore[method-assign]
    check.figures = timed("held_out_s", check.figures)  # type: ignore[method-assign]
    out = Path(a.work) / ("audit_bare" if a.no_records else "audit")
    shutil.rmtree(out, ignore_errors=True)
    args = ["audit", a.data, "--engine", a.engine, "--sensitive", "s", "--observed",
            ",".join(OBS), "--epsilon", str(EPSILON), "--folds", str(FOLDS), "--out", str(out),
            "--json", *(["--no-records"] if a.no_records else [])]  # fmt: skip
    t0 = time.perf_counter()
    try:
        app(args, prog_name="privwatch")
    except SystemExit as exc:
        seen["exit"] = exc.code
    total = time.perf_counter() - t0
    res = {"total_s": total, **timers, **seen}
    leak = out / "leakage.json"
    if leak.is_file():  # which route and engine the audit took (--engine auto: and why)
        doc = json.loads(leak.read_text())
        res.update({k: doc.get(k) for k in ("route", "engine", "route_reason")})
    res["written_to"] = str(out)  # hashed and deleted by run_job, outside this process
    return res


def job_hand(a: argparse.Namespace) -> dict[str, Any]:
    spark = a.engine == "spark"
    t0 = time.perf_counter()
    if a.job == "hand_count":
        table = (hand_count_spark if spark else hand_count_duckdb)(a.data)
        return {"total_s": time.perf_counter() - t0, "groups": len(table)}
    out = str(Path(a.work) / "hand_same")
    shutil.rmtree(out, ignore_errors=True)
    mapping = str(Path(a.work) / "mapping.parquet")
    t0 = time.perf_counter()
    (hand_same_spark if spark else hand_same_duckdb)(a.data, mapping, out)
    total = time.perf_counter() - t0
    return {"total_s": total, "written_to": out}  # hashed and deleted by run_job


def job_classifier(a: argparse.Namespace) -> dict[str, Any]:
    """The audit of ``privwatch audit --estimator classifier`` through the library (the same
    plan and route; the command line has no flag for the estimator's settings): 1 epoch, 1
    member, 2 folds, records written to ``release.parquet``."""
    from privwatch.audit import run

    out = Path(a.work) / "audit_classifier"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    t0 = time.perf_counter()
    res = run(
        source=a.data, sensitive="s", observed=OBS, epsilon=EPSILON, estimator="classifier",
        folds=2, estimator_params={"epochs": 1, "n_ensemble": 1}, out=out,
    )  # fmt: skip
    total = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return {"total_s": total, "route": res.route, "status": res.leakage["status"]}


def run_job(job: str, data: str, a: argparse.Namespace, *extra: str) -> dict[str, Any]:
    """One job in its own process under /usr/bin/time: its result, wall, CPU and peak RSS."""
    result = Path(a.dir) / f"job_{os.getpid()}.json"
    cmd = ["/usr/bin/time", "-f", "%e %M %U %S", "-o", f"{result}.time", sys.executable,
           __file__, "--job", job, "--data", data, "--engine", a.engine, "--work", a.dir,
           "--result", str(result), *extra]  # fmt: skip
    env = {**os.environ, **(SPARK_ENV if a.engine == "spark" else {})}
    load = os.getloadavg()[0]
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    wall, rss, user, system = Path(f"{result}.time").read_text().split()[-4:]
    res: dict[str, Any] = json.loads(result.read_text())
    res.update(wall_s=float(wall), peak_rss_mib=int(rss) / 1024, cpu_s=float(user) + float(system))
    res.update(load_before=load, load_after=os.getloadavg()[0])
    written = res.pop("written_to", None)
    if written is not None:  # hashed here, after the job's process: not in its time or CPU
        if (Path(written) / "release.parquet").exists():  # the in-memory route writes CSV
            res["release_hash"] = release_hash(written)
            res["scores_hash"] = scores_hash(written)
        shutil.rmtree(written, ignore_errors=True)
    result.unlink()
    Path(f"{result}.time").unlink()
    print(job, *extra, json.dumps(res), flush=True)
    return res


def as_glob(path: Path, rows: int, a: argparse.Namespace) -> str:
    """A glob over a folder holding only ``path``: a glob is never audited in memory (a single
    small file, or one with ``--engine pandas``, is), so the route is the engine's or the
    streamed one."""
    folder = Path(a.dir) / f"glob_{rows}"
    folder.mkdir(exist_ok=True)
    if not (folder / path.name).exists():
        (folder / path.name).symlink_to(path.resolve())
    return str(folder / "*.parquet")


def scale(a: argparse.Namespace, rows: int) -> dict[str, Any]:
    path = Path(a.dir) / f"data_{rows}.parquet"
    generate(path, rows)
    data = as_glob(path, rows, a) if a.glob else str(path)
    r: dict[str, Any] = {"rows": rows, "engine": a.engine}
    r["hand_count_1"] = run_job("hand_count", data, a)
    r["audit_no_records"] = run_job("audit", data, a, "--no-records")
    r["audit"] = run_job("audit", data, a)
    r["hand_same"] = run_job("hand_same", data, a)
    r["hand_count_2"] = run_job("hand_count", data, a)
    hand = (r["hand_count_1"]["total_s"] + r["hand_count_2"]["total_s"]) / 2
    r["ratio_no_records_to_hand_count"] = r["audit_no_records"]["total_s"] / hand
    r["ratio_audit_to_hand_same"] = r["audit"]["total_s"] / r["hand_same"]["total_s"]
    r["held_out_share"] = r["audit"]["held_out_s"] / r["audit"]["total_s"]
    r["same_release"] = r["audit"].get("release_hash") == r["hand_same"]["release_hash"]
    r["same_scores"] = r["audit"].get("scores_hash") == r["hand_same"]["scores_hash"]
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    ap.add_argument("--engine", default="duckdb")
    ap.add_argument("--dir", default="/tmp/pwbench")
    ap.add_argument("--classifier", action="store_true")
    ap.add_argument("--glob", action="store_true", help="pass a glob of the file (no memory route)")
    ap.add_argument("--job", default="")
    ap.add_argument("--data", default="")
    ap.add_argument("--work", default="")
    ap.add_argument("--result", default="")
    ap.add_argument("--no-records", action="store_true")
    a = ap.parse_args()
    if a.job:
        fn = {"audit": job_audit, "classifier": job_classifier}.get(a.job, job_hand)
        Path(a.result).write_text(json.dumps(fn(a)))
        return
    Path(a.dir).mkdir(parents=True, exist_ok=True)
    results = []
    for rows in a.rows:
        if a.classifier:
            path = Path(a.dir) / f"data_{rows}.parquet"
            generate(path, rows)
            data = as_glob(path, rows, a) if a.glob else str(path)
            results.append({"rows": rows, **run_job("classifier", data, a)})
        else:
            results.append(scale(a, rows))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
