"""Whether a row of a matrix product has the same bits when computed with other rows (one
BLAS thread): OPENBLAS_NUM_THREADS=1 python blas_rows.py (issue #42 item 3, fifth pass)."""
import numpy as np
rng=np.random.default_rng(0)
bad={}
for t in range(200):
    R=[1,2,3,8,20][t%5]; N=int(rng.integers(50,3000)); K=int(rng.choice([181,361]))
    A=rng.random((N,K)); G=rng.random((K,R))
    full=A@G
    sub=np.sort(rng.choice(N,int(rng.integers(1,N)),replace=False))
    part=A[sub]@G
    key=R
    bad.setdefault(key,[0,0]); bad[key][1]+=1
    if not np.array_equal(full[sub],part): bad[key][0]+=1
    # gemv
print("gemm by R", bad)
b=0
for t in range(100):
    N=int(rng.integers(50,3000)); A=rng.random((N,181)); g=rng.random(181)
    sub=np.sort(rng.choice(N,int(rng.integers(1,N)),replace=False))
    b+= not np.array_equal((A@g)[sub], A[sub]@g)
print("gemv", b)
b=0
for t in range(100):
    N=int(rng.integers(50,3000)); z=rng.normal(size=(N,181))*3
    sub=np.sort(rng.choice(N,int(rng.integers(1,N)),replace=False))
    b+= not np.array_equal(np.exp(z)[sub], np.exp(z[sub]))
print("exp", b)
