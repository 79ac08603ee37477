"""Issue #16, item 5: ``privwatch audit --estimator auto`` on a census-style table of 30,000 rows
and 10 mixed columns (``census_like``: age and hours numeric; sex, race, education, marital,
occupation, workclass, region categorical; income the sensitive column), no manual binning.

Each audit runs as a child process under ``/usr/bin/time -v`` (interpreter start, reading the CSV
and writing every output included; peak resident memory of the child). Baseline in the same
run: the same audit with ``--estimator quadratic_logistic`` (one family, no model selection).

Run: python benchmarks/bench_lift_cli.py [n_rows]
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from _timing import write
from tests.release._reference_venvs import census_like


def run(csv: Path, out: Path, estimator: str) -> dict[str, object]:
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "privwatch", "audit", str(csv)]
    cmd += ["--sensitive", "income", "--estimator", estimator, "--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    result: dict[str, object] = {
        "command": " ".join(cmd[2:]),
        "exit_code": proc.returncode,
        "seconds": seconds,
        "peak_rss_gib": int(peak.group(1)) / 2**20 if peak else None,
        "stdout_tail": proc.stdout[-1500:],
    }
    leakage = out / "leakage.json"
    if leakage.exists():
        data = json.loads(leakage.read_text())
        result["estimator_in_report"] = data.get("settings", {}).get("estimator")
        result["status"] = data.get("status", data.get("leakage", {}).get("status"))
    if proc.returncode not in (0, 3):
        result["stderr_tail"] = proc.stderr[-3000:]
    return result


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30_000
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "census.csv"
        table = census_like(n, np.random.default_rng(0))
        table.to_csv(csv, index=False)
        results: dict[str, Any] = {
            "n_rows": n,
            "n_columns": table.shape[1],
            "dtypes": {c: str(t) for c, t in table.dtypes.items()},
            "baseline quadratic_logistic": run(csv, Path(tmp) / "q", "quadratic_logistic"),
            "auto": run(csv, Path(tmp) / "a", "auto"),
        }
    base, auto = results["baseline quadratic_logistic"], results["auto"]
    results["ratio_auto_to_baseline"] = auto["seconds"] / base["seconds"]
    print(json.dumps(results, indent=1))
    print(f"written to {write('lift_cli', results)}")


if __name__ == "__main__":
    main()
