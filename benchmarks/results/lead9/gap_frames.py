import sys
import numpy as np, pandas as pd
from privwatch.release.merged import TupleUnits, merge_to_pass
EPSILON=0.4
def frame_of(records, seed, sizes, sd):
    rng = np.random.default_rng(seed)
    grid = np.stack(np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij"), -1).reshape(-1, len(sizes))
    px = rng.lognormal(0, sd, len(grid))
    share = rng.choice([0.31, 0.69], len(grid))
    rows = rng.choice(len(grid), records, p=px / px.sum())
    frame = pd.DataFrame({f"c{j}": [f"v{v}" for v in grid[rows, j]] for j in range(len(sizes))})
    frame["s"] = np.where(rng.random(records) < share[rows], "a", "b")
    return frame
for sizes, sd, records in [((20,20,10),2.0,4000), ((20,20,10),2.5,4000), ((30,20,10),2.5,5000)]:
  for seed in range(3):
    frame = frame_of(records, seed, sizes, sd)
    units = TupleUnits.count(frame, ["s"], ["c0", "c1", "c2"], 5, seed)
    found = merge_to_pass(units, EPSILON, "both", tolerance=0.05, rng=seed)
    held = found.held
    n = units.table.total().sum(1)
    if held is None: print(sizes, sd, seed, "none"); continue
    print(sizes, sd, seed, "N1", round(float((n==1).sum()/n.sum()),3), "kept", round(float(n[found.keep].sum()/n.sum()),4), "ci", np.round(held.breach_probability_ci,4), "gap" if held.interval.endswith("under it") else "-", found.satisfied, flush=True)
