"""Watchdog fit + score_samples + transform on 10,000,000 rows, |S| = 4, 100,000 distinct
observed tuples, against a straightforward pandas groupby implementation of the same steps.

Run: python benchmarks/bench_watchdog.py [--rows N]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

from privwatch import PrivacyWarning, Watchdog

EPS = 1.0


def make_data(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_a, n_b, n_s = 1000, 100, 4
    p = rng.dirichlet(np.full(n_s * n_a * n_b, 2.0))
    cells = rng.choice(p.size, size=n, p=p)
    s, x = np.divmod(cells, n_a * n_b)
    a, b = np.divmod(x, n_b)
    return pd.DataFrame({"s": s.astype(np.int64), "a": a.astype(np.int64), "b": b.astype(np.int64)})


def pandas_baseline(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """The same three steps with groupby / merge / loc, as a data scientist would write them."""
    n = len(df)
    counts = df.groupby(["a", "b", "s"]).size().unstack("s", fill_value=0)
    n_x = counts.sum(axis=1)
    n_s = counts.sum(axis=0)
    with np.errstate(divide="ignore"):
        ll = np.log(counts.div(n_x, axis=0).div(n_s / n, axis=1))
    table = ll.copy()
    table.columns = [f"ll_{c}" for c in table.columns]
    table["risk"] = ll.abs().max(axis=1)
    scored = df.merge(table, left_on=["a", "b"], right_index=True, how="left")
    risk = scored["risk"].to_numpy()
    flags = risk > EPS
    release = df[["a", "b"]].astype(object)
    release.loc[flags, ["a", "b"]] = "*"
    return risk, flags, release


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    df = make_data(args.rows)
    n_tuples = int(df.groupby(["a", "b"]).ngroups)
    print(f"{len(df):,} rows, {n_tuples:,} distinct observed tuples, |S| = 4")

    warnings.simplefilter("ignore", PrivacyWarning)
    runs: list[dict[str, float]] = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        est = Watchdog(epsilon=EPS, sensitive="s", observed=["a", "b"], max_levels=None).fit(df)
        t1 = time.perf_counter()
        scores = est.score_records(df)
        t2 = time.perf_counter()
        release = est.transform(df)
        t3 = time.perf_counter()
        runs.append(
            {"fit": t1 - t0, "score_samples": t2 - t1, "transform": t3 - t2, "total": t3 - t0}
        )
        del release
    release = est.transform(df)
    best = min(runs, key=lambda r: r["total"])
    t_pw = best["total"]

    pd_runs = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        risk_pd, flags_pd, release_pd = pandas_baseline(df)
        pd_runs.append(time.perf_counter() - t0)
    t_pd = min(pd_runs)

    same_flags = bool(np.array_equal(flags_pd, scores.risk > EPS))
    same_risk = bool(np.allclose(risk_pd, scores.risk))
    same_release = bool(
        (release_pd["a"].astype(str).to_numpy() == release["a"].astype(str).to_numpy()).all()
    )
    results = {
        "rows": len(df),
        "distinct_tuples": n_tuples,
        "epsilon": EPS,
        "repeats": args.repeat,
        "privwatch_seconds_best": best,
        "privwatch_totals_all": [r["total"] for r in runs],
        "pandas_groupby_seconds_best": t_pd,
        "pandas_groupby_all": pd_runs,
        "speedup_vs_pandas": t_pd / t_pw,
        "outputs_agree": {"flags": same_flags, "risk": same_risk, "release": same_release},
        "flagged_fraction": float(np.mean(scores.risk > EPS)),
    }
    print(__import__("json").dumps(results, indent=2))
    print(f"written to {write('watchdog', results)}")


if __name__ == "__main__":
    main()
