"""How many held-out checks an audit of the census-like table makes, and where (release, frontier,
alternatives): PYTHONPATH=src python count_checks.py EPS."""
import sys, os, traceback, collections
sys.path.insert(0, "benchmarks")
from bench_census_audit import census_like
import privwatch as pw
from privwatch.release.search import _one_search as os_
log = []
orig = os_.held_out_check
def wrapped(space, table, fit, box, **kw):
    st = [f.name for f in traceback.extract_stack()]
    where = "alternatives" if "suggest" in st else ("frontier" if "frontier_points" in st else "release")
    log.append((where, box.epsilon, box.disclosure))
    return orig(space, table, fit, box, **kw)
os_.held_out_check = wrapped
eps = float(sys.argv[1])
r = pw.audit.run(source=census_like(30000), sensitive="race", epsilon=eps)
print(r.leakage["status"], len(log))
for k, v in sorted(collections.Counter(log).items(), key=str): print(k, v)
