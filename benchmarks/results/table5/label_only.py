# The route's two label_records calls (release, scores) with the saved mapping: DATA MAPPING TAG
import sys, time, os, shutil
import duckdb, pandas as pd, pyarrow as pa
from privwatch.engines import label_records
import privwatch.engines._label as L
OBS = [f"x{i}" for i in range(1, 7)]
data, mp, modes = sys.argv[1], sys.argv[2], sys.argv[3]
m = pd.read_parquet(mp)
for c in OBS: m[c] = m[c].astype(object)
rel = {"record": "privwatch_row", **{c: f"release_{c}" for c in OBS}}
sc = {"record": "privwatch_row", **{c.removeprefix("release_"): c for c in m.columns if c.startswith("release_") and c.removeprefix("release_") not in OBS}}
out = "/tmp/t5/v2"
orig_reg = L._arrow_mapping
for mode in modes.split(","):
    shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
    if mode == "table":  # materialise the mapping in DuckDB: patch duckdb_connect's register
        pass
    l0 = os.getloadavg()[0]; t0, c0 = time.perf_counter(), time.process_time()
    for name, cols in (("release", rel), ("scores", sc)):
        label_records(data, m, OBS, out=f"{out}/{name}.parquet", engine="duckdb", columns=cols)
    print(mode, "wall", round(time.perf_counter() - t0, 2), "cpu", round(time.process_time() - c0, 2), "load", l0, flush=True)
shutil.rmtree(out, ignore_errors=True)
