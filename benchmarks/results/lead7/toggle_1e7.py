import sys, time, os
sys.path.insert(0, os.path.join(os.getcwd(), 'benchmarks'))
import bench_fixed_part as b
from privwatch.release.heldout import _model as M
from privwatch.release.search import _frontier as F
on = F.Releases._prefetch
def off(self, epsilon):
    return None
counts = b.synth_table(int(sys.argv[1]))
for i in range(int(sys.argv[2])):
    for mode in ("off", "on"):
        F.Releases._prefetch = on if mode == "on" else off
        row = []
        for eps in (0.5, 0.003):
            M.HeldOutModel._cache.clear()
            r = b.decide_once(counts, eps, 0)
            row.append((r["wall_s"], r["cpu_s"]))
        print(mode, i, row, "ratio cpu", round(row[1][1] / row[0][1], 3), "wall", round(row[1][0] / row[0][0], 3), "load", round(os.getloadavg()[0], 2), flush=True)
