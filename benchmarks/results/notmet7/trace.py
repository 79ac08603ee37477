"""Trace the searches of one decide at 10^7 (epsilon argv[1])."""
import sys, time
sys.path.insert(0, "benchmarks")
import bench_fixed_part as b
from privwatch.release.search import _margin, _one_search, _frontier, _lattice
log = []
orig_s = _one_search.Fitter._search
def _search(self, counts, digest):
    t = time.process_time(); r = orig_s(self, counts, digest); dt = time.process_time() - t
    o = self.options
    log.append(("search", o.epsilon, o.disclosure, o.max_suppressed, o.confidence, round(dt, 3), r.nodes_evaluated, round(r.information_global, 3), r.information_local and round(r.information_local, 3), r.plan.kind))
    return r
_one_search.Fitter._search = _search
orig_r = _one_search.refine_locally
def rl(space, start, counts, box, k, *a):
    t = time.process_time(); r = orig_r(space, start, counts, box, k, *a)
    log.append(("  refine", box.epsilon, box.disclosure, box.confidence, round(time.process_time() - t, 3), start.kind, bool(start.suppressed.all())))
    return r
_one_search.refine_locally = rl
orig_c = _one_search._check
class W:
    pass
def chk(space, plan, box, rng):
    t = time.process_time(); r = orig_c(space, plan, box, rng)
    log.append(("  check-init", box.epsilon, box.disclosure, round(time.process_time() - t, 3)))
    f = r.figures
    def fig():
        t = time.process_time(); x = f(); log.append(("  figures", box.epsilon, box.disclosure, round(time.process_time() - t, 3))); return x
    r.figures = fig
    return r
_one_search._check = chk
counts = b.synth_table(10_000_000)
t = time.process_time()
out = b.decide_once(counts, float(sys.argv[1]), 0)
print("total cpu", time.process_time() - t, out["status"], out["n_alternatives"])
for l in log: print(*l)
