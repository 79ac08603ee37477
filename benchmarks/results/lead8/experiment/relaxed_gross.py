import sys, numpy as np
sys.path.insert(0, 'benchmarks')
from bench_calibration_merged import *
pmf = PMFS["gross"]()
rows = [run_one(pmf, "relaxed", 5000, s) for s in range(int(sys.argv[1]))]
cov = np.mean([r['ci'][0] <= r['truth'] + 1e-12 <= r['ci'][1] + 2e-12 for r in rows])
print("coverage", cov, "mean truth", np.mean([r['truth'] for r in rows]), "mean est", np.mean([r['estimate'] for r in rows]), "nats", np.mean([r['information_nats'] for r in rows]))
