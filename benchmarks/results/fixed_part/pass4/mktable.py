import sys, pickle
sys.path.insert(0, "benchmarks")
import bench_fixed_part as b
from pathlib import Path
src, rows, out = sys.argv[1], int(float(sys.argv[2])), sys.argv[3]
t = b.synth_table(rows) if src == "synth" else b.duckdb_table(rows, Path("/tmp/fx/data"))
pickle.dump(t, open(out, "wb"))
