import numpy as np, sys
sys.path.insert(0, "/tmp/pw42/base/src")
from privwatch.release.heldout._posterior import posteriors, _grid
from privwatch.release.heldout._prior import basis
rng = np.random.default_rng(1)
bad = 0
for trial in range(40):
    R = [1, 2, 3, 8, 20][trial % 5]
    df = 14 if trial % 2 else 30
    alphas = rng.normal(0, 1, (R, df))
    N = rng.integers(50, 3000)
    n = rng.integers(1, 12, N).astype(float); k = rng.binomial(n.astype(int), 0.3).astype(float)
    eta = np.round(rng.normal(-1, 0.5, N) / 0.01) * 0.01
    bounds = [(0.1, 0.6)] * R
    m, v, o = _grid(alphas, k, n, eta, bounds)
    sub = np.sort(rng.choice(N, rng.integers(1, N), replace=False))
    m2, v2, o2 = _grid(alphas, k[sub], n[sub], eta[sub], bounds)
    same = np.array_equal(m[sub], m2) and np.array_equal(v[sub], v2) and np.array_equal(o[sub], o2)
    bad += not same
    if not same: print("diff", R, N, len(sub), np.abs(m[sub]-m2).max())
print("bad", bad)
