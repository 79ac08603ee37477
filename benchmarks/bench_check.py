"""privwatch check on 30,000 records: a generalised release of a census-like table (target: < 5 s
on 2 cores), timed stage by stage, with and without the held-out check and the classic measures.

Run: ``python benchmarks/bench_check.py`` (writes benchmarks/results/bench_check.json).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from _timing import write
from tests.release._reference_venvs import census_like, generalise

from privwatch.audit import check

N = 30_000
QI = ["age", "sex", "race", "education"]


def main() -> None:
    warnings.simplefilter("ignore")
    people = census_like(N, np.random.default_rng(0))
    release = generalise(people)[QI]
    rng = np.random.default_rng(1)
    release.loc[rng.random(N) < 0.01, QI] = "*"  # 1 % suppressed
    rows = {}
    for name, options in {
        "full (held-out 5 folds, classic)": {},
        "no classic measures": {"checks": False},
        "no held-out check": {"folds": 0},
        "epsilon proposed (smallest met)": {"epsilon": None},
    }.items():
        kw = {"epsilon": 1.0, **options}
        t0 = time.perf_counter()
        result = check(people, release, sensitive="income", observed=QI, **kw)
        seconds = time.perf_counter() - t0
        held = result.leakage["held_out"]
        rows[name] = {
            "seconds": round(seconds, 2),
            "status": result.leakage["status"],
            "epsilon": result.epsilon,
            "cells": result.details["check"]["cells"],
            "held_out": None if held is None else held["breach_probability"],
        }
        print(f"{name:36s} {seconds:6.2f} s  {rows[name]}")
    write("bench_check", {"n_records": N, "observed": QI, "runs": rows})


if __name__ == "__main__":
    main()
