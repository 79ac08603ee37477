"""cProfile (CPU clock) of one census-like audit: python census_prof.py EPS OUT.prof, run from a tree
with benchmarks/ and PYTHONPATH=<tree>/src."""
import cProfile, pstats, sys, time
sys.argv=[sys.argv[0]]+sys.argv[1:]
sys.path.insert(0,'benchmarks')
from bench_census_audit import census_like
import privwatch as pw
eps=float(sys.argv[1]); out=sys.argv[2]
df=census_like(30000)
pr=cProfile.Profile(time.process_time)
t0=time.process_time(); w0=time.perf_counter()
pr.enable()
r=pw.audit.run(source=df, sensitive="race", epsilon=eps)
pr.disable()
print("cpu", time.process_time()-t0, "wall", time.perf_counter()-w0, r.leakage["status"])
pr.dump_stats(out)
