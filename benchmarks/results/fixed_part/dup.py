import sys, time, hashlib, collections, os
sys.path.insert(0, "/work/wt-perf/benchmarks")
import numpy as np
from bench_census_audit import census_like
import privwatch as pw
from privwatch.release.heldout import _posterior as P, _evaluation as E
seen = collections.Counter(); cost = collections.Counter()
orig = P.posteriors
def h(*arrs):
    d = hashlib.blake2b(digest_size=12)
    for a in arrs:
        if isinstance(a, list): d.update(repr(a).encode())
        else: d.update(np.ascontiguousarray(a).tobytes())
    return d.digest()
def wrapped(alphas, k, n, eta, bounds):
    key = h(alphas, k, n, eta, bounds)
    key2 = h(alphas, k, n, eta)
    t = time.process_time()
    r = orig(alphas, k, n, eta, bounds)
    dt = time.process_time() - t
    seen[("full", key)] += 1; seen[("nob", key2)] += 1
    cost[("full", key)] += dt; cost[("nob", key2)] += dt
    return r
P.posteriors = wrapped
E.posteriors = wrapped
import privwatch.release.heldout._model as M; M.posteriors = wrapped
df = census_like(int(sys.argv[2]))
t0 = time.process_time()
r = pw.audit.run(source=df, sensitive="race", epsilon=float(sys.argv[1]))
tot = time.process_time() - t0
for kind in ("full", "nob"):
    keys = [k for k in seen if k[0] == kind]
    calls = sum(seen[k] for k in keys)
    total = sum(cost[k] for k in keys)
    redundant = sum(cost[k] * (seen[k] - 1) / seen[k] for k in keys)
    print(kind, "calls", calls, "distinct", len(keys), "posterior cpu", round(total, 2), "redundant cpu", round(redundant, 2), "audit cpu", round(tot, 2), r.leakage["status"])
