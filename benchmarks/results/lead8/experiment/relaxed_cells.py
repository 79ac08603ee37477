import sys, numpy as np
sys.path.insert(0, 'benchmarks')
from bench_calibration_merged import *
from privwatch.release.heldout import BreachCheck
from privwatch.release.merged._ladder import cells_of
seed = int(sys.argv[1])
pmf = PMFS["gross"]()
df = pmf.sample(5000, np.random.default_rng(10_000 + seed))
units = TupleUnits.count(df, ["s"], pmf.columns, 5, seed)
found = merge_to_pass(units, pmf.epsilon, "both", tolerance=DELTA, delta=DELTA, rng=seed)
print("truth", truth(pmf, units, found.keep), "ci", found.held.breach_probability_ci, "note", found.held.interval[-30:])
plain = units.box(pmf.epsilon, "both")
cell_of, n_cells, star = cells_of(found.keep)
bc = BreachCheck(units.table, plain, (cell_of, n_cells, star))
_, _, m, values, fitted, _, ev, per_value, p_cell, size = bc._parts
rows = ev.rows; alone = rows[ev.single[ev.cell_of[rows]]]
vm = fitted[0]
print("gap", vm.gaps)
print("alone", len(alone), "kept", found.keep.sum(), "size kept", size[:n_cells][np.arange(n_cells) != star].sum(), "star", size[star], "total", size.sum())
print("p_cell of kept: mean", p_cell[np.arange(n_cells) != star].mean())
print("gap upper", bc._gap_upper(2000, np.random.default_rng(0)))
