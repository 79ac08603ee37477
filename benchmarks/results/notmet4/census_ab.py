"""One in-memory audit of the census-like table (bench_census_audit.census_like): CPU and wall
seconds, load, and hashes of the release, scores and tradeoff; leakage.json written for cmp.
Run: SRCROOT=<tree with benchmarks/> PYTHONPATH=<tree>/src python census_ab.py N EPS OUT.json"""
import json, sys, time, os
sys.path.insert(0, os.path.join(os.environ["SRCROOT"], "benchmarks"))
from bench_census_audit import census_like
import privwatch as pw
n, eps, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
df = census_like(n)
c0, w0 = time.process_time(), time.perf_counter()
r = pw.audit.run(source=df, sensitive="race", epsilon=eps)
c1, w1 = time.process_time(), time.perf_counter()
import hashlib, pandas as pd
hs = {k: (None if v is None else hashlib.sha256(pd.util.hash_pandas_object(v, index=True).values.tobytes()).hexdigest()[:16])
      for k, v in (("release", r.release), ("scores", r.scores), ("tradeoff", r.tradeoff))}
print(json.dumps({"hashes": hs, "file": pw.__file__, "n": n, "eps": eps, "cpu": c1 - c0, "wall": w1 - w0,
                  "status": r.leakage["status"], "load": os.getloadavg()[0]}))
json.dump(r.leakage, open(out, "w"), sort_keys=True, default=str, indent=1)
