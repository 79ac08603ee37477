"""Time of the 5,000-pmf Monte Carlo of Sadeghi et al. Fig. 1 and 2 (greedy algorithm included).

Run: python benchmarks/bench_watchdog_mc.py  (it runs experiments/sadeghi2020_watchdog_mc/run.py)
"""

from __future__ import annotations

import json
import runpy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    script = ROOT / "experiments" / "sadeghi2020_watchdog_mc" / "run.py"
    t0 = time.perf_counter()
    runpy.run_path(str(script), run_name="__main__")
    total = time.perf_counter() - t0
    inner = json.loads((script.parent / "results.json").read_text())["seconds"]
    out = {"monte_carlo_seconds": inner, "with_plots_seconds": total, "n_pmfs": 5000}
    print(json.dumps(out, indent=2))
    print(f"written to {write('watchdog_mc', out)}")


if __name__ == "__main__":
    main()
