"""CPU per phase of one decide at 10^7: argv[1] epsilon; argv[2] optional 'prof' -> cProfile of alternatives."""
import sys, time, cProfile, pstats
sys.path.insert(0, "benchmarks")
import bench_fixed_part as b
from privwatch.release.search import _find_release as fr
log = {}
def wrap(name, f):
    def g(*a, **k):
        t = time.process_time(); r = f(*a, **k); log[name] = log.get(name, 0) + time.process_time() - t; return r
    return g
fr.frontier_points = wrap("frontier", fr.frontier_points)
prof = cProfile.Profile(time.process_time) if len(sys.argv) > 2 else None
oa = fr._advice
def adv(*a):
    if prof: prof.enable()
    t = time.process_time(); r = oa(*a); log["alternatives"] = time.process_time() - t
    if prof: prof.disable()
    return r
fr._advice = adv
from privwatch.release.search._frontier import Releases
oat = Releases.at
first = []
def at(self, e):
    if not first:
        first.append(1); t = time.process_time(); r = oat(self, e); log["requested"] = time.process_time() - t; return r
    return oat(self, e)
Releases.at = at
counts = b.synth_table(10_000_000)
t = time.process_time(); w = time.perf_counter()
out = b.decide_once(counts, float(sys.argv[1]), 0)
print("decide cpu %.2f wall %.2f" % (time.process_time() - t, time.perf_counter() - w), out["status"], out["n_alternatives"], {k: round(v, 2) for k, v in log.items()})
if prof:
    pstats.Stats(prof).sort_stats("tottime").print_stats(35)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(50)
