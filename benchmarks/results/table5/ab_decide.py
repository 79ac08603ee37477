"""decide() on a pickled count table: CPU, wall, and the full leakage section + curve (for cmp)."""
import json, os, pickle, sys, time, hashlib
sys.path.insert(0, sys.argv[4])
import numpy as np, pandas as pd
from privwatch.audit import AuditSpec
from privwatch.audit._route_engine import EngineRoute, _Counted
OBS = [f"x{i}" for i in range(1, 7)]
counts = pickle.load(open(sys.argv[1], "rb"))
eps = float(sys.argv[2])
spec = AuditSpec(sensitive=["s"], observed=OBS, epsilon=eps, folds=5, records=False)
route = EngineRoute("duckdb", "bench")
holes = counts.iloc[:0][[*OBS, "s"]]
counted = _Counted(counts, "duckdb", "bench", ["s"], list(OBS), spec, {}, holes)
load0 = os.getloadavg()[0]
t0, c0 = time.perf_counter(), time.process_time()
d = route.decide(spec, counted, lambda m: None)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
def default(o):
    if isinstance(o, np.ndarray): return o.tolist()
    if isinstance(o, (np.floating, np.integer, np.bool_)): return o.item()
    return str(o)
leak = json.dumps(d.leakage, sort_keys=True, default=default)
curve = hashlib.sha256(pd.util.hash_pandas_object(d.curve).values.tobytes()).hexdigest()[:16]
dec = d.decision
mp = hashlib.sha256(pd.util.hash_pandas_object(dec.mapping.astype(str)).values.tobytes()).hexdigest()[:16] if dec.mapping is not None else None
rel = hashlib.sha256(pd.util.hash_pandas_object(dec.release.astype(str)).values.tobytes()).hexdigest()[:16]
risk = hashlib.sha256(np.asarray(dec.risk).tobytes()).hexdigest()[:16]
out = {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "load_before": load0, "load_after": os.getloadavg()[0],
       "leakage_sha": hashlib.sha256(leak.encode()).hexdigest()[:16], "curve": curve, "mapping": mp, "release": rel, "risk": risk,
       "has_reid": "reidentification" in d.leakage}
json.dump({"summary": out, "leakage": json.loads(leak)}, open(sys.argv[3], "w"))
print(json.dumps(out))
