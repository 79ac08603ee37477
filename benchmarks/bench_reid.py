"""Re-identification risk against a known truth (issue #44, item 5).

Three populations of 1,000,000 records whose every class size is known:

- ``known``: four independent quasi-identifiers of known distributions — age (100 years,
  uniform), sex (2, 49/51), area (1,000 areas, Zipf weights 1/rank^1.1) and marital status
  (5, 50/25/12/8/5 %);
- ``census``: a smoothed bootstrap of a census-like table — 30,000 records of the UCI-Adult-like
  generator of ``tests/release/_reference_venvs.py`` resampled with replacement to 1,000,000,
  age jittered by -2..2 years and hours by -3..3 (a plain bootstrap would repeat every record
  about 33 times and leave no population unique); quasi-identifiers age, sex, race, education,
  marital status, hours;
- ``pitman``: a partition drawn from the Pitman model itself (Chinese restaurant process,
  theta = 50, alpha = 0.6): the one population where Pitman's assumptions hold, a check of the
  implementation rather than of the model.

From each, simple random samples at 1 %, 10 % and 50 % (``--seeds`` seeds each). For every
sample: the true number of population uniques and the true share of sample records that are
population unique; each estimator's estimate (Pitman, Zayatz, SNB) and relative error; the
estimator Dankar et al.'s rule picks and whether it lands within 20 % of the truth; and the
bias of the Benedetti-Franconi individual risk (weights 1 / sampling fraction) against the true
mean of 1 / F_k over the sample's records.

Run: ``nice -n 10 python benchmarks/bench_reid.py [--seeds 3]``; writes
``benchmarks/results/reid.json`` and prints the Markdown table of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.release._reference_venvs import census_like

from privwatch.measures import individual_risk, population_uniques

N = 1_000_000
FRACTIONS = (0.01, 0.1, 0.5)
WITHIN = 0.2


def known_population(rng: np.random.Generator) -> np.ndarray:
    """Codes of four independent quasi-identifiers of known distributions, one row a record."""
    area_w = 1.0 / np.arange(1, 1001) ** 1.1
    return np.column_stack(
        [
            rng.integers(0, 100, N),
            rng.choice(2, N, p=[0.49, 0.51]),
            rng.choice(1000, N, p=area_w / area_w.sum()),
            rng.choice(5, N, p=[0.5, 0.25, 0.12, 0.08, 0.05]),
        ]
    )


def census_population(rng: np.random.Generator) -> np.ndarray:
    """A smoothed bootstrap of a 30,000-record census-like table, as codes."""
    table = census_like(30_000, np.random.default_rng(0))
    rows = table.iloc[rng.integers(0, len(table), N)].reset_index(drop=True)
    age = rows["age"].to_numpy() + rng.integers(-2, 3, N)
    hours = rows["hours"].to_numpy() + rng.integers(-3, 4, N)
    cols = [age, hours] + [
        np.unique(rows[c].to_numpy(), return_inverse=True)[1].reshape(-1)
        for c in ("sex", "race", "education", "marital")
    ]
    return np.column_stack(cols)


def pitman_population(
    rng: np.random.Generator, theta: float = 50.0, alpha: float = 0.6
) -> np.ndarray:
    """Class labels of a two-parameter Chinese restaurant process of ``N`` customers: a new
    class with probability ``(theta + K alpha) / (theta + i)``, else class ``k`` with
    probability ``(n_k - alpha) / (theta + i)`` (a customer drawn uniformly, kept with
    probability ``(n_k - alpha) / n_k``)."""
    u = rng.random((N, 3))
    labels = np.empty(N, dtype=np.int64)
    sizes: list[int] = []
    for i in range(N):
        if i == 0 or u[i, 0] < (theta + len(sizes) * alpha) / (theta + i):
            labels[i] = len(sizes)
            sizes.append(1)
            continue
        while True:
            k = int(labels[int(u[i, 1] * i)])
            if u[i, 2] < (sizes[k] - alpha) / sizes[k]:
                break
            u[i, 1:] = rng.random(2)
        labels[i] = k
        sizes[k] += 1
    return labels[:, None]


def class_ids(codes: np.ndarray) -> np.ndarray:
    """One integer id per record: its quasi-identifier tuple."""
    return np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1)


def one_setting(ids: np.ndarray, pop_sizes: np.ndarray, frac: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n = round(frac * N)
    sample = ids[rng.choice(N, n, replace=False)]
    cls, inv, f = np.unique(sample, return_inverse=True, return_counts=True)
    big_f_true = pop_sizes[cls]
    truth = int((pop_sizes == 1).sum())
    t0 = time.perf_counter()
    res = population_uniques(f, N)
    seconds = time.perf_counter() - t0
    share_true = float((big_f_true[inv] == 1).mean())
    # Benedetti-Franconi with design weights 1 / fraction against the true 1 / F_k
    r = individual_risk(f, f / frac)
    mean_r = float((f * r).sum() / n)
    true_mean = float((f / big_f_true).sum() / n)

    def rel(x: float | None) -> float | None:
        return None if x is None else (x - truth) / truth

    return {
        "fraction": frac,
        "seed": seed,
        "n": n,
        "sample_uniques": int((f == 1).sum()),
        "true_population_uniques": truth,
        "true_share_sample_population_unique": share_true,
        "estimated_share": res.estimate * frac / n,
        "pitman": res.pitman,
        "zayatz": res.zayatz,
        "snb": res.snb,
        "rel_error": {"pitman": rel(res.pitman), "zayatz": rel(res.zayatz), "snb": rel(res.snb)},
        "rule": res.estimator,
        "rule_estimate": res.estimate,
        "rule_rel_error": rel(res.estimate),
        "rule_within_20pct": bool(abs(res.estimate - truth) <= WITHIN * truth),
        "individual_risk_mean": mean_r,
        "true_mean_inverse_F": true_mean,
        "individual_risk_bias": (mean_r - true_mean) / true_mean,
        "seconds": seconds,
    }


def _pct(x: float | None) -> str:
    return "failed" if x is None else f"{100 * x:+.0f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results/reid.json")
    args = ap.parse_args()
    t_start = time.perf_counter()
    rows: list[dict] = []
    makers = (
        ("known", known_population),
        ("census", census_population),
        ("pitman", pitman_population),
    )
    for name, make in makers:
        ids = class_ids(make(np.random.default_rng(12345)))
        pop_sizes = np.bincount(ids)
        for frac in FRACTIONS:
            for seed in range(args.seeds):
                row = one_setting(ids, pop_sizes, frac, 1000 * seed + int(frac * 100))
                row["population"] = name
                row["classes"] = int(pop_sizes.size)
                rows.append(row)
    hits = sum(r["rule_within_20pct"] for r in rows)
    summary = {
        "settings": len(rows),
        "rule_within_20pct": hits,
        "share_within_20pct": hits / len(rows),
        "target": 0.8,
        "seconds": time.perf_counter() - t_start,
    }
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    print(
        "| population | fraction | seed | true uniques | Pitman | Zayatz | SNB | rule picks | "
        "rule within 20 % | true share of sample pop.-unique | estimated | BF risk bias |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        e = r["rel_error"]
        print(
            f"| {r['population']} | {r['fraction']:.0%} | {r['seed']} | "
            f"{r['true_population_uniques']:,} | {_pct(e['pitman'])} | {_pct(e['zayatz'])} | "
            f"{_pct(e['snb'])} | {r['rule']} ({_pct(r['rule_rel_error'])}) | "
            f"{'yes' if r['rule_within_20pct'] else 'no'} | "
            f"{100 * r['true_share_sample_population_unique']:.2f} % | "
            f"{100 * r['estimated_share']:.2f} % | {_pct(r['individual_risk_bias'])} |"
        )
    print(
        f"\nrule within 20 % of the truth: {hits} / {len(rows)} settings "
        f"({100 * hits / len(rows):.0f} %; target 80 %); {summary['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main()
