"""Speed of the whole in-memory audit on a census-sized table (issue 32 point 9).

A 30,000 x 10 census-like table (nine observed columns of the shapes of the UCI Adult data —
age band, work class, education, marital status, occupation, relationship, sex, hours band,
region — and race as the sensitive column) drawn from a fixed seed, audited with
``privwatch.audit.run`` (plug-in, epsilon 1, two-sided, 5 folds, classic measures and attack on),
as ``privwatch audit`` does. Reports the wall time of each step and the total; the target is
< 20 s on 2 cores. Baseline in the same run: the plain group-by count of the table (pandas),
the least any audit must do.

Run: ``python benchmarks/bench_census_audit.py [--n 30000] [--epsilon 1] [--repeat 1]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = {
    "age": 8, "workclass": 7, "education": 16, "marital": 7, "occupation": 14,
    "relationship": 6, "sex": 2, "hours": 5, "region": 10,
}  # fmt: skip


def census_like(n: int, seed: int = 0) -> pd.DataFrame:
    """Correlated categorical columns and a sensitive column that depends on two of them."""
    g = np.random.default_rng(seed)
    latent = g.normal(size=(n, 3))
    out: dict[str, np.ndarray] = {}
    for name, k in COLUMNS.items():
        w = g.normal(size=3)
        score = latent @ w + g.normal(scale=1.0, size=n)
        cuts = np.quantile(score, np.sort(g.uniform(0, 1, k - 1)))
        out[name] = np.array([f"{name}{v}" for v in np.searchsorted(cuts, score)], dtype=object)
    race_score = latent[:, 0] * 0.8 + (out["region"] == "region3") * 1.5 + g.normal(size=n)
    race = np.where(race_score > 1.6, "black", np.where(race_score < -2.2, "other", "white"))
    out["race"] = race
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30_000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--out", default="benchmarks/results/census_audit.json")
    args = ap.parse_args()
    import privwatch as pw

    df = census_like(args.n)
    t0 = time.perf_counter()
    df.groupby([*COLUMNS, "race"], observed=True).size()
    baseline = time.perf_counter() - t0
    steps: list[tuple[str, float]] = []
    last = [time.perf_counter()]

    def progress(message: str) -> None:
        now = time.perf_counter()
        steps.append((message, now))
        last[0] = now

    t0 = time.perf_counter()
    result = pw.audit.run(source=df, sensitive="race", epsilon=args.epsilon, progress=progress)
    total = time.perf_counter() - t0
    marks = [(m, t - t0) for m, t in steps]
    timing = [
        (m, (marks[i + 1][1] if i + 1 < len(marks) else total) - s)
        for i, (m, s) in enumerate(marks)
    ]
    doc = {
        "n": args.n, "epsilon": args.epsilon, "total_s": total, "count_baseline_s": baseline,
        "ratio_to_count": total / baseline, "steps": timing, "status": result.leakage["status"],
        "held_out": result.leakage["held_out"], "information_nats": result.found.information_nats
        if result.found else None,
    }  # fmt: skip
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2, default=str))
    for m, s in timing:
        print(f"{s:8.2f} s  {m}")
    print(f"total {total:.2f} s; plain count {baseline:.3f} s; status {doc['status']}")


if __name__ == "__main__":
    main()
