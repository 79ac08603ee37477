import sys, collections
sys.path.insert(0, "benchmarks")
import numpy as np
import bench_fixed_part as b
from privwatch.release.search import _lattice as L, _one_search as O
stats = collections.Counter()
orig_sg = L.search_global
cur = {}
def sg(space, counts, box, ms, **kw):
    cur["k"] = (box.epsilon, box.disclosure, box.confidence, ms)
    best, ev = orig_sg(space, counts, box, ms, **kw)
    stats[cur["k"] + ("evaluated",)] = ev
    return best, ev
O.search_global = sg
orig = L.evaluate_node
def en(space, levels, counts, box, ms, **kw):
    bound, res = orig(space, levels, counts, box, ms, **kw)
    # the plugin shortcut condition, recomputed
    ck = kw.get("counts_key")
    if ck is not None and box.confidence is not None:
        hit = space.memo._counts.get((levels, ck))
        if hit is None:
            stats[cur["k"] + ("unknown",)] += 1
            return bound, res
        ct = space.memo.as_float(hit[0]); sizes = hit[1]
        cells = lambda: ct
        plugin = space.memo.node_breaks(levels, ck, box, cells, plugin=True)
        forced = sizes < 0.0
        star = space.node_star(levels)
        cell_of, _n = space.node_cells(levels)
        if star is not None: forced[cell_of[star]] = True
        short = sizes[plugin | forced].sum() > ms * float(sizes.sum()) + 1e-9
        stats[cur["k"] + ("short" if short else ("refused-late" if res is None else "kept"),)] += 1
    return bound, res
L.evaluate_node = en
counts = b.synth_table(10_000_000)
out = b.decide_once(counts, 0.003, 0)
for k in sorted(stats, key=str): print(k, stats[k])
