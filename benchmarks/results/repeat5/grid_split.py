"""Cost of _posterior._grid with and without the mass outside the box (absent edges):
PYTHONPATH=src python grid_split.py (issue #42 item 3, fifth pass)."""
import numpy as np, time
from privwatch.release.heldout._posterior import _grid
from threadpoolctl import threadpool_limits
rng=np.random.default_rng(0)
for D,R in [(3000,10),(8000,20),(20000,5)]:
    alphas=rng.normal(0,0.3,(R,14)); n=rng.integers(50,150,D).astype(float); k=rng.binomial(n.astype(int),0.25).astype(float)
    eta=np.round(rng.normal(-1.1,0.2,D)/0.01)*0.01
    with threadpool_limits(1):
        for b,name in [((0.0,1.0),"no out"),((0.2,0.31),"out")]:
            t=time.process_time()
            for _ in range(3): _grid(alphas,k,n,eta,[b]*R)
            print(D,R,name,round((time.process_time()-t)/3,3))
