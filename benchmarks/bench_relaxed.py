"""relaxed_watchdog at scale (issue #18): the O(|X| log |X|) scan against the quadratic one.

python benchmarks/bench_relaxed.py            # 16,000 symbols: both, identical? ; 1e6: new only
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "watchdog"))
from test_relaxed_scale import _random_pmf, _reference

from privwatch.watchdog import relaxed_watchdog


def main() -> None:
    out: dict[str, object] = {}
    rng = np.random.default_rng(16000)
    arr = _random_pmf(rng, 3, 16_000, ties=False)
    t0 = time.perf_counter()
    keep, exempted = _reference(arr, 0.4, 0.1, math.inf)
    out["quadratic_16000_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = relaxed_watchdog(arr, 0.4, 0.1)
    out["new_16000_s"] = time.perf_counter() - t0
    out["identical_16000"] = bool(np.array_equal(got.keep, keep) and got.exempted == exempted)
    out["exempted_16000"] = len(exempted)
    for n in (100_000, 1_000_000):
        arr = _random_pmf(np.random.default_rng(n), 4, n, ties=False)
        t0 = time.perf_counter()
        got = relaxed_watchdog(arr, 0.4, 0.1)
        out[f"new_{n}_s"] = time.perf_counter() - t0
        out[f"exempted_{n}"] = len(got.exempted)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
