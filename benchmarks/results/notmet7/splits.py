import sys, time, hashlib, collections
sys.path.insert(0, "benchmarks")
import numpy as np
import bench_fixed_part as b
from privwatch.release.search import _local_recoding as lr
seen = collections.Counter(); colseen = collections.Counter(); stats = []
orig = lr._best_splits
def bs(space, rows, part, n_parts, levels, done, codes, cols, sizes, box, *rest):
    h = hashlib.blake2b(rows.tobytes() + part.tobytes() + levels.tobytes() + done.tobytes(), digest_size=16).digest()
    seen[h] += 1
    for j in range(levels.shape[0]):
        hj = hashlib.blake2b(rows.tobytes() + part.tobytes() + levels[j].tobytes() + done[j].tobytes() + bytes([j]), digest_size=16).digest()
        colseen[hj] += 1
    t = time.process_time(); r = orig(space, rows, part, n_parts, levels, done, codes, cols, sizes, box, *rest)
    stats.append((len(rows), n_parts, time.process_time() - t, seen[h]))
    return r
lr._best_splits = bs
counts = b.synth_table(10_000_000)
out = b.decide_once(counts, float(sys.argv[1]), 0)
print("calls", len(stats), "distinct states", len(seen), "col-states", sum(colseen.values()), "distinct", len(colseen))
tot = sum(s[2] for s in stats); rep = sum(s[2] for s in stats if s[3] > 1)
print("time", tot, "time in repeated states", rep)
big = collections.Counter((s[0] // 10000) * 10000 for s in stats)
print(sorted(big.items()))
print("time by rows>=90000:", sum(s[2] for s in stats if s[0] >= 90000), sum(1 for s in stats if s[0] >= 90000))
