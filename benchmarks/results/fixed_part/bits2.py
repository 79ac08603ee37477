import numpy as np
from threadpoolctl import threadpool_limits
ops = {"A@G": lambda A, G, v: A @ G, "A.T@v": lambda A, G, v: A.T @ v, "A@g": lambda A, G, v: A @ G[:, 0], "v@A": lambda A, G, v: v @ A}
diff = {}
for M in (50, 333, 1000, 3408, 5000, 8000, 20000):
    for R in (1, 2, 3, 8, 20):
        A = np.random.default_rng(M * 100 + R).random((M, 181)); G = np.random.default_rng(M+R).random((181, R)); v = np.random.default_rng(M-R).random(M)
        out = {}
        for nt in (1, 2):
            with threadpool_limits(nt):
                out[nt] = {k: f(A, G, v) for k, f in ops.items()}
        for k in ops:
            if not np.array_equal(out[1][k], out[2][k]):
                diff.setdefault(k, []).append((M, R))
print(diff)
