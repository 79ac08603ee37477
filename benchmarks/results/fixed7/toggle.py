"""Within one process: decide with the background fit + search prefetch on and off, alternating."""
import sys, time, os, json
sys.path.insert(0, os.path.join(os.getcwd(), 'benchmarks'))
import bench_fixed_part as b
from privwatch.release.heldout import _model as M
from privwatch.release.search import _frontier as F
rows, pairs = int(sys.argv[1]), int(sys.argv[2])
on = F.Releases._prefetch
def off(self, epsilon):
    return None
counts = b.synth_table(rows)
res = {"on": [], "off": []}
for i in range(pairs):
    for mode in ("off", "on"):
        F.Releases._prefetch = on if mode == "on" else off
        M.HeldOutModel._cache.clear()
        load = os.getloadavg()[0]
        t0 = time.thread_time()
        r = b.decide_once(counts, 0.5, 0)
        r["main_cpu"] = round(time.thread_time() - t0, 3)
        res[mode].append((r["wall_s"], r["cpu_s"], round(load, 2)))
        print(mode, i, r["wall_s"], r["cpu_s"], "main", r["main_cpu"], "load", round(load, 2), r["information_nats"], r["held_out"]["breach_probability_ci"], flush=True)
for m in res:
    w = sorted(x[0] for x in res[m]); c = sorted(x[1] for x in res[m])
    print(m, "median wall", w[len(w)//2], "median cpu", c[len(c)//2])
