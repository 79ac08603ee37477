import sys, time, shutil, os, resource
from privwatch.cli import app
import privwatch
out = sys.argv[1]
shutil.rmtree(out, ignore_errors=True)
args = ["audit", "/tmp/pw5m/data_5000000.parquet", "--engine", "duckdb", "--sensitive", "s", "--observed",
        ",".join(f"x{i}" for i in range(1, 7)), "--epsilon", "0.5", "--folds", "5", "--out", out, "--json"]
t0 = time.perf_counter(); c0 = time.process_time()
try:
    app(args, prog_name="privwatch")
except SystemExit:
    pass
print("base" if "codes_base" in privwatch.__file__ else "new", "wall %.2f cpu %.2f load %.2f" % (time.perf_counter() - t0, time.process_time() - c0, os.getloadavg()[0]), file=sys.stderr)
shutil.rmtree(out, ignore_errors=True)
