import numpy as np, time, sys
from privwatch.release.heldout import _prior as eb
rng = np.random.default_rng(0)
N = 96000
n = rng.poisson(1040, N).astype(float); k = rng.binomial(n.astype(int), 0.25).astype(float)
codes = np.stack([rng.integers(0, c, N) for c in (4,5,5,8,10,12)], 1)
c0, t0 = time.process_time(), time.perf_counter()
f = eb.fit_candidate(eb.PRIOR_CANDIDATES[0], k, n, codes, 0.25, np.random.default_rng(1))
print("fit_candidate cpu", time.process_time() - c0, "wall", time.perf_counter() - t0, "lik", f.lik.shape)
g = np.exp(eb.log_prior(f.alpha[0])); w = f.mult / f.mult.sum()
c0, t0 = time.process_time(), time.perf_counter()
for _ in range(200):
    m = np.maximum(f.lik @ g, 1e-300); pw = (f.lik.T @ (w / m)) * g
print("matvec pair ms cpu", (time.process_time() - c0) / 200 * 1e3, "wall", (time.perf_counter() - t0) / 200 * 1e3)
