"""Pickle a folded count table: ``synth ROWS OUT`` (bench_fixed_part.synth_table) or
``duckdb PARQUET OUT`` (engines.count_table of bench_engines' data, as the engine route counts)."""
import pickle
import sys

sys.path.insert(0, "benchmarks")
import bench_fixed_part as b  # noqa: E402

from privwatch.engines import count_table  # noqa: E402

kind, arg, out = sys.argv[1:4]
if kind == "synth":
    t = b.synth_table(int(float(arg)))
else:
    t = count_table(arg, ["s"], b.OBS, engine="duckdb", folds=5, seed=0)
pickle.dump(t, open(out, "wb"))
print(kind, arg, len(t), "rows")
