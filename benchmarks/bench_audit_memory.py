"""Peak memory of `privwatch audit` on a 10^7-row CSV (issue #19).

The file has the columns of ``bench_audit.py``'s 1,000,000-row table (a 3-valued sensitive
``group`` and 6 categorical observed columns with 2..12 levels, 70 % noise), written in chunks of
10^6 rows (chunk ``i`` drawn with seed ``i``) so that the generator itself stays small. The audit
runs as a child process under ``/usr/bin/time -v``; its "Maximum resident set size" and wall time
are printed and written to ``benchmarks/results/audit_memory.json``. The CSV and the outputs live
in a temporary folder under /tmp that is deleted afterwards.

Run: python benchmarks/bench_audit_memory.py [--rows 10000000] [-- extra audit options], e.g.
``-- --epsilon 1 --engine pandas`` for the in-memory route (:func:`privwatch.audit.run`);
files over 64 MiB go to the engine route (DuckDB) by default.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

CHUNK = 1_000_000


def chunk_frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 3, n)
    cols = {"group": np.array(["a", "b", "c"])[s]}
    for j, levels in enumerate([2, 4, 6, 8, 10, 12]):
        shift = (s * (j + 1)) % levels
        noise = rng.integers(0, levels, n)
        keep = rng.random(n) < 0.7
        cols[f"c{j}"] = np.char.add(f"v{j}_", np.where(keep, noise, shift).astype(str))
    return pd.DataFrame(cols)


def big_csv(path: Path, rows: int) -> None:
    for i, start in enumerate(range(0, rows, CHUNK)):
        frame = chunk_frame(i, min(CHUNK, rows - start))
        frame.to_csv(path, mode="w" if i == 0 else "a", header=i == 0, index=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("extra", nargs="*", help="extra `privwatch audit` options")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="privwatch-bench-", dir="/tmp"))
    try:
        csv = tmp / "big.csv"
        t0 = time.perf_counter()
        big_csv(csv, args.rows)
        generation = time.perf_counter() - t0
        cmd = [
            "/usr/bin/time",
            "-v",
            sys.executable,
            "-m",
            "privwatch",
            "audit",
            str(csv),
            "--sensitive",
            "group",
            "--observed",
            "c0,c1,c2,c3,c4,c5",
            "--out",
            str(tmp / "out"),
            *args.extra,
        ]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        print(proc.stdout[-1500:])
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        if proc.returncode not in (0, 3) or peak is None:  # 3: written, guarantee NOT MET
            raise SystemExit(proc.stderr[-3000:])
        out = {
            "rows": args.rows,
            "csv_bytes": csv.stat().st_size,
            "csv_generation_seconds_not_counted": generation,
            "audit_seconds": wall,
            "peak_rss_gib": int(peak.group(1)) / 2**20,
            "exit_code": proc.returncode,
            "extra_options": args.extra,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(out)
    name = f"audit_memory_{args.rows}_" + "_".join(a.strip("-") for a in args.extra)
    print(f"written to {write(name, out)}")


if __name__ == "__main__":
    main()
