import sys, numpy as np
sys.path.insert(0, 'benchmarks')
from bench_calibration_merged import *
pmf = PMFS["gross"]()
for seed in (0, 2, 44):
    df = pmf.sample(5000, np.random.default_rng(10_000 + seed))
    n = df.groupby(pmf.columns).size().to_numpy()
    N = np.bincount(n)
    print(seed, "K", len(n), "N1", N[1], "N2", N[2], "N3", N[3], "d=N1/K", round(N[1] / len(n), 3), "GT singleton weight 2N2/N1", round(2 * N[2] / N[1], 3), "PY weight 1-d", round(1 - N[1] / len(n), 3))
