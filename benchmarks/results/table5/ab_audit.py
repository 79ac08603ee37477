"""The whole CLI audit in-process (records written): CPU, wall, leakage.json and file-content hashes."""
import json, os, sys, time, shutil, hashlib
import duckdb
from privwatch.cli import app
OBS = [f"x{i}" for i in range(1, 7)]
data, out, res = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(out, ignore_errors=True)
args = ["audit", data, "--engine", "duckdb", "--sensitive", "s", "--observed", ",".join(OBS),
        "--epsilon", "0.5", "--folds", "5", "--out", out, "--json"]
import privwatch.engines as eng
lab = {"s": 0.0}
orig = eng.label_records
def timed(*a, **k):
    t0 = time.perf_counter()
    try: return orig(*a, **k)
    finally: lab["s"] += time.perf_counter() - t0
eng.label_records = timed
load0 = os.getloadavg()[0]
t0, c0 = time.perf_counter(), time.process_time()
try: app(args, prog_name="privwatch")
except SystemExit: pass
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
r = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "label_records_s": round(lab["s"], 2), "load_before": load0, "load_after": os.getloadavg()[0]}
for f in ("release", "scores"):
    cols = [c for c in duckdb.sql(f"DESCRIBE SELECT * FROM '{out}/{f}.parquet'").fetchall()]
    names = [c[0] for c in cols]
    r[f + "_columns"] = ",".join(names)
    e = ", ".join(f'CAST("{n}" AS VARCHAR)' for n in names)
    r[f + "_hash"] = str(duckdb.sql(f"SELECT count(*), sum(hash({e})) FROM '{out}/{f}.parquet'").fetchall()[0])
doc = json.load(open(f"{out}/leakage.json"))
for k in ("stamp",): doc.pop(k, None)
r["leakage_sha"] = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]
json.dump({"r": r, "leakage": doc}, open(res, "w"))
print(json.dumps(r), file=sys.stderr)
