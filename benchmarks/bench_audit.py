"""End-to-end `privwatch audit`: the bundled COMPAS data, and a 1,000,000-row CSV with 6
categorical observed columns. Wall time and peak memory of the command (a child process).

Run: python benchmarks/bench_audit.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

PRIVWATCH = [sys.executable, "-m", "privwatch"]


def run(args: list[str]) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([*PRIVWATCH, *args], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 3):  # 3: outputs written, the guarantee NOT MET (reported)
        raise SystemExit(proc.stderr)
    print(proc.stdout[-600:])
    return {
        "seconds": wall,
        "peak_rss_gib": max(peak_kib, before) / 2**20,
        "status": "met" if proc.returncode == 0 else "not_met",
    }


def big_csv(path: Path, n: int = 1_000_000) -> None:
    rng = np.random.default_rng(0)
    s = rng.integers(0, 3, n)
    cols = {"group": np.array(["a", "b", "c"])[s]}
    for j, levels in enumerate([2, 4, 6, 8, 10, 12]):
        shift = (s * (j + 1)) % levels
        noise = rng.integers(0, levels, n)
        keep = rng.random(n) < 0.7
        cols[f"c{j}"] = np.char.add(f"v{j}_", np.where(keep, noise, shift).astype(str))
    pd.DataFrame(cols).to_csv(path, index=False)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        compas = run(["audit", "--dataset", "compas", "--out", f"{tmp}/compas"])
        csv = Path(tmp) / "big.csv"
        t0 = time.perf_counter()
        big_csv(csv)
        gen = time.perf_counter() - t0
        big = run(["audit", str(csv), "--sensitive", "group", "--out", f"{tmp}/big"])
    out = {
        "compas_audit": compas,
        "csv_1M_rows_6_categorical": big,
        "csv_generation_seconds_not_counted": gen,
    }
    print(json.dumps(out, indent=2))
    print(f"written to {write('audit', out)}")


if __name__ == "__main__":
    main()
