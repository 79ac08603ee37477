"""Issue #16: ``AutoLift`` on 2,000,000 records with 6 mixed-type columns (time and memory).

Records: 4 numeric columns N(0, 1) and 2 categorical ones (5 and 8 levels); S in {0, 1} with
log-odds 0.8 x0 - 0.5 x1 + 0.4 x0 x2 + an effect per level of each categorical column. The
baseline in the same run is a plain (linear) scikit-learn ``LogisticRegression`` on the same
one-hot encoded records: the figures are its fit time and the ratio of AutoLift's to it; the
peak resident memory is the whole process's (``ru_maxrss``), and so is the CPU time; the load
averages at the start and the end say how shared the machine was.

Run: /usr/bin/time -v python benchmarks/bench_lift_scale.py [n_rows]
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

from privwatch.estimators import AutoLift, TabularPreprocessor


def table(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float64)
    c1, c2 = rng.integers(0, 5, n), rng.integers(0, 8, n)
    eff1, eff2 = rng.normal(0, 0.5, 5), rng.normal(0, 0.3, 8)
    logit = 0.8 * x[:, 0] - 0.5 * x[:, 1] + 0.4 * x[:, 0] * x[:, 2] + eff1[c1] + eff2[c2] - 0.5
    s = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    frame = pd.DataFrame(x, columns=["a", "b", "c", "d"])
    frame["region"] = pd.Categorical(np.array(list("ABCDE"))[c1])
    frame["job"] = pd.Categorical([f"j{v}" for v in range(8)])[c2]
    return frame, s


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    warnings.simplefilter("ignore", FutureWarning)
    load_start = os.getloadavg()
    frame, s = table(n, 0)
    from sklearn.linear_model import LogisticRegression

    t0 = time.perf_counter()
    feats = TabularPreprocessor().fit_transform(frame)
    LogisticRegression(max_iter=1000).fit(feats, s)
    baseline = time.perf_counter() - t0
    del feats
    t0 = time.perf_counter()
    auto = AutoLift(rng=0, progress=True).fit(frame, s)
    seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    auto.log_lift(frame)
    score_seconds = time.perf_counter() - t1
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak_gib = usage.ru_maxrss / 2**20
    result = {
        "n_rows": n,
        "n_columns": frame.shape[1],
        "auto_fit_seconds": seconds,
        "score_all_rows_seconds": score_seconds,
        "baseline_linear_logistic_seconds": baseline,
        "ratio_auto_to_baseline": seconds / baseline,
        "peak_rss_gib": peak_gib,
        # CPU time of the whole process (baseline + AutoLift + scoring): on a shared machine the
        # wall times above are mostly waiting
        "process_cpu_seconds": usage.ru_utime + usage.ru_stime,
        # 1-, 5- and 15-minute load averages (2 cores) at the start and at the end
        "load_average_start": load_start,
        "load_average_end": os.getloadavg(),
        "chosen": auto.best_name_,
        "reason": auto.reason_,
        "selection": auto.selection_.drop(columns=["reason"]).to_dict(orient="records"),
    }
    print(json.dumps(result, indent=1, default=str))
    print(f"written to {write('lift_scale', result)}")


if __name__ == "__main__":
    main()
