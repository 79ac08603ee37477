"""Held-out checks of a margin that is not the last one tried (its release is replaced by the next
margin's) whose point estimate is above the tolerance, and their CPU time: issue #42 item 3,
fifth pass. PYTHONPATH=src:benchmarks python intermediate.py census 30000 EPS | fixed ROWS EPS"""
import sys, time
sys.path.insert(0, "benchmarks")
from privwatch.release.search import _margin as mg, _one_search as os_
times = {}
orig_check = os_.held_out_check
def check(*a, **kw):
    t = time.process_time(); out = orig_check(*a, **kw); times[id(out)] = time.process_time() - t
    return out
os_.held_out_check = check
seen = []
orig_search = mg._search
def search(space, options, folds, rng):
    out = orig_search(space, options, folds, rng); seen.append(out); return out
mg._search = search
orig_stp = mg.search_to_pass
inter = []
def stp(space, options, folds, tol, rng, aim=True):
    start = len(seen)
    out = orig_stp(space, options, folds, tol, rng, aim)
    for s in seen[start:]:
        if s is not out and s.held is not None:
            inter.append((options.epsilon, options.disclosure, s.options.confidence,
                          s.held.breach_probability, s.held.breach_probability > tol,
                          times.get(id(s.held), 0.0)))
    return out
mg.search_to_pass = stp
import privwatch.release.search._frontier as fr
fr.search_to_pass = stp
kind, a, eps = sys.argv[1], sys.argv[2], float(sys.argv[3])
t0 = time.process_time()
if kind == "census":
    from bench_census_audit import census_like
    import privwatch as pw
    status = pw.audit.run(source=census_like(int(a)), sensitive="race", epsilon=eps).leakage["status"]
else:
    import bench_fixed_part as bfp
    counts = bfp.synth_table(int(float(a)))
    t0 = time.process_time()
    status = bfp.decide_once(counts, eps, 0)["status"]
print("status", status, "cpu", round(time.process_time() - t0, 1), "checks", len(times),
      "in", round(sum(times.values()), 1), "s")
for row in inter: print(row)
above = [r for r in inter if r[4]]
print("intermediate checks", len(inter), "estimate above tolerance", len(above),
      "their CPU", round(sum(r[5] for r in above), 2))
