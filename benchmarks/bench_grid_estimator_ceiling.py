"""How high can the grid Bayes-error estimate (eq. 24-26) go on the test data? (issue 6)

A mechanism that sends every user to the same distribution (the centre of the users plus planar
Laplace noise) has true Bayes error exactly 1 - 1/n_users. Its eq. 24-26 estimate on the test
points (100 hits, 260 x 260 grid) shows the estimator's downward bias for a spread-out release at
each budget: the ceiling a learned mechanism with that spread can reach on this yardstick.

Run: python benchmarks/bench_grid_estimator_ceiling.py
"""

from __future__ import annotations

import numpy as np
from _timing import write
from scipy.optimize import brentq

from privwatch.datasets import load_gowalla_paris, synthetic_users
from privwatch.estimators import bayes_error_grid
from privwatch.mechanisms import PlanarLaplace

# only the budgets that can pay for the trip to the centre (173 m and 518 m cannot)
CASES = [("synthetic", 270.0, 3250.0), ("gowalla", 1150.0, 2250.0)]


def _displacement(centre: np.ndarray, src: np.ndarray, eps: float) -> float:
    z = centre + PlanarLaplace(eps).release(np.zeros_like(src), rng=1)
    return float(np.linalg.norm(z - src, axis=1).mean())


def main() -> None:
    rows = []
    for name, budget, half in CASES:
        data = synthetic_users(rng=0) if name == "synthetic" else load_gowalla_paris(rng=0)
        src = np.repeat(data.test, 100, axis=0)
        lab = np.repeat(data.test_sensitive, 100)
        centre = np.median(data.train, axis=0)
        base = float(np.linalg.norm(src - centre, axis=1).mean())
        row = {"dataset": name, "L": budget, "distance_to_centre_m": base}
        for spread in (0.0, 0.25, 0.5):  # share of the budget spent on noise around the centre
            target = base + spread * max(budget - base, 0.0)
            if spread > 0:
                eps = brentq(
                    lambda e, c=centre, x=src, t=target: _displacement(c, x, e) - t, 1e-5, 10.0
                )
            if spread == 0.0:
                z = np.repeat(centre[None], len(src), axis=0)
            else:
                z = centre + PlanarLaplace(eps).release(np.zeros_like(src), rng=1)
            row[f"spread={spread}"] = {
                "displacement_m": float(np.linalg.norm(z - src, axis=1).mean()),
                "bayes_error_260": bayes_error_grid(
                    z, lab, bounds=(-half, half, -half, half), cells=260
                ),
            }
        rows.append(row)
        print(row, flush=True)
    print("written", write("grid_estimator_ceiling", {"rows": rows}))


if __name__ == "__main__":
    main()
