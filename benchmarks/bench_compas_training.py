"""Training time of every neural log-lift estimator on the COMPAS training split (3,695 rows).

Run: python benchmarks/bench_compas_training.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

from privwatch.datasets import COMPAS_OBSERVED, load_compas
from privwatch.estimators import ClassifierLift, DVLift

PAPER = {
    "hidden": (128, 128),
    "optimizer": "adagrad",
    "lr": 1e-3,
    "epochs": 3000,
    "patience": 3000,
    "n_ensemble": 1,
    "validation_fraction": 0.1,
    "batch_size": 100_000,
}


def main() -> None:
    df = load_compas()
    order = np.random.default_rng(0).permutation(len(df))
    train = df.iloc[order[: round(0.7 * len(df))]]
    x, s = train[COMPAS_OBSERVED], train["race_code"].to_numpy()
    candidates = {
        "ClassifierLift (privwatch defaults)": ClassifierLift(rng=0),
        "DVLift dv (privwatch defaults)": DVLift(rng=0),
        "DVLift nwj (privwatch defaults)": DVLift(objective="nwj", rng=0),
        "ClassifierLift (paper settings)": ClassifierLift(rng=0, calibrate=False, **PAPER),
        "DVLift dv (paper settings, tanh)": DVLift(rng=0, activation="tanh", **PAPER),
    }
    out = {"n_train": len(train)}
    for name, est in candidates.items():
        t0 = time.perf_counter()
        est.fit(x, s)
        out[name] = time.perf_counter() - t0
        print(f"{name:40s} {out[name]:6.1f} s", flush=True)
    print(json.dumps(out, indent=2))
    print(f"written to {write('compas_training', out)}")


if __name__ == "__main__":
    main()
