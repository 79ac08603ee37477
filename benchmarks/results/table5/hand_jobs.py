"""The hand same-outputs job's two writes (no count) with the audit's mapping, one process:
``hand6`` writes the 6 score columns bench_scale.py's hand job wrote before this pass, ``hand``
all 10 the audit writes (the per-value log_lift[<value>] columns too); ``audit`` the audit's
former label query (the join on the six columns). Usage: DATA MAPPING MODES (comma-separated)."""
import sys, time, os, shutil
import duckdb, pandas as pd, pyarrow as pa
data, mp = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "both"
OBS = [f"x{i}" for i in range(1, 7)]
m = pd.read_parquet(mp)
m_obj = m.copy()
for c in OBS: m_obj[c] = m_obj[c].astype(object)  # as the route has it
scores = [c for c in m.columns if c.startswith("release_") and c.removeprefix("release_") not in OBS]
def con2():
    return duckdb.connect(":memory:", config={"memory_limit": os.environ.get("MEMLIM", "2GB"), "temp_directory": "/tmp/privwatch-duckdb"})
def audit(out, explain=False, **kw):
    con = con2()
    con.register("m", pa.Table.from_pandas(m_obj.reset_index(drop=True), preserve_index=False))
    src = f"(SELECT * EXCLUDE (file_row_number), CAST(file_row_number AS BIGINT) AS privwatch_row FROM read_parquet(['{data}'], file_row_number=true))"
    on = " AND ".join(f"t.{k} = m.{k}" for k in OBS)
    con.execute("SET preserve_insertion_order = false")
    for name, cols in (("release", {c: f"release_{c}" for c in OBS}), ("scores", {c.removeprefix("release_"): c for c in scores})):
        sel = ", ".join(["t.privwatch_row AS record", *(f'm."{v}" AS "{k}"' for k, v in cols.items())])
        q = f"SELECT {sel} FROM {src} t LEFT JOIN m ON {on}"
        t0 = time.perf_counter(); c0 = time.process_time()
        if explain:
            r = con.sql(f"EXPLAIN ANALYZE COPY ({q}) TO '{out}/{name}.parquet' (FORMAT PARQUET)").fetchall()
            print(r[0][1])
        else:
            con.execute(f"COPY ({q}) TO '{out}/{name}.parquet' (FORMAT PARQUET)")
        print("audit", name, round(time.perf_counter() - t0, 2), "wall", file=sys.stderr)
def hand(out, cols_scores):
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    for name, cols in (("release", OBS), ("scores", cols_scores)):
        picked = ", ".join(f'm."release_{c}" AS "{c}"' for c in cols)
        t0 = time.perf_counter()
        con.execute(f"COPY (SELECT t.file_row_number AS record, {picked} FROM read_parquet('{data}', file_row_number=true) t LEFT JOIN read_parquet('{mp}') m USING ({', '.join(OBS)})) TO '{out}/{name}.parquet' (FORMAT parquet)")
        print("hand", name, round(time.perf_counter() - t0, 2), "wall", file=sys.stderr)
out = "/tmp/t5/lab_out"; shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
for what in mode.split(","):
    t0 = time.perf_counter(); c0 = time.process_time()
    if what == "audit": audit(out)
    elif what == "explain": audit(out, explain=True)
    elif what == "hand6": hand(out, ["risk", "flagged", "suppressed", "released_cell_log_lift", "advice_column", "advice_risk"])
    elif what == "hand": hand(out, [c.removeprefix("release_") for c in scores])
    print(what, "total wall", round(time.perf_counter() - t0, 2), "cpu", round(time.process_time() - c0, 2), "load", os.getloadavg()[0], file=sys.stderr)
shutil.rmtree(out, ignore_errors=True)
