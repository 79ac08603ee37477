"""Peak memory of a neural lift estimator trained from Parquet streamed in batches (issue #18).

A Parquet file of N rows and 6 columns (sensitive ``s`` with 4 values; numeric ``x0, x1, x2``
whose means depend on ``s``; text ``c0`` with 4 and ``c1`` with 8 levels, 70 % noise) is written
in row groups of 131,072 rows, chunk by chunk, so that the generator stays small. Each case runs
as a child process under ``/usr/bin/time -v`` ("Maximum resident set size" is the figure of
record):

- ``import``: the child imports privwatch, torch, pandas and pyarrow and stops (the floor);
- ``stream``: ``ClassifierLift(...).fit_source(file, "s", observed)`` then
  ``score_source(file, scores.parquet)``: nothing but batches in memory;
- ``memory``: ``pandas.read_parquet(file)``, ``ClassifierLift(...).fit(X, s)`` and
  ``log_lift(X)`` on the whole table (the in-memory route).

Same estimator settings for both (one member, 1 epoch, batch 4,096, hidden 64-64, rng 0), with
OMP_NUM_THREADS=1 and torch.set_num_threads(1). Results: ``benchmarks/results/neural_stream.json``.

Run: python benchmarks/bench_neural_stream.py [--rows 1000000 10000000] [--cases stream memory]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _timing import write

CHUNK = 1_048_576
ROW_GROUP = 131_072
OBSERVED = ["x0", "x1", "x2", "c0", "c1"]
SETTINGS: dict[str, Any] = {
    "hidden": (64, 64),
    "epochs": 1,
    "n_ensemble": 1,
    "batch_size": 4096,
    "patience": 5,
    "rng": 0,
}


def chunk_frame(seed: int, n: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    s = g.integers(0, 4, n)
    cols: dict[str, Any] = {"s": np.array(["a", "b", "c", "d"])[s]}
    for j in range(3):
        cols[f"x{j}"] = 0.3 * (j + 1) * s + g.normal(0, 1, n)
    for j, levels in enumerate([4, 8]):
        keep = g.random(n) < 0.7
        code = np.where(keep, g.integers(0, levels, n), (s * (j + 1)) % levels)
        cols[f"c{j}"] = np.char.add(f"v{j}_", code.astype(str))
    return pd.DataFrame(cols)


def write_parquet(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    for i, start in enumerate(range(0, rows, CHUNK)):
        table = pa.Table.from_pandas(chunk_frame(i, min(CHUNK, rows - start)), preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=ROW_GROUP)
    assert writer is not None
    writer.close()


def child(case: str, path: str, out: str) -> None:
    import torch

    torch.set_num_threads(1)
    import pyarrow.parquet  # noqa: F401

    from privwatch.estimators import ClassifierLift

    t0 = time.perf_counter()
    if case == "stream":
        est = ClassifierLift(**SETTINGS).fit_source(path, "s", OBSERVED)
        fit = time.perf_counter() - t0
        est.score_source(path, out)
    elif case == "memory":
        frame = pd.read_parquet(path)
        est = ClassifierLift(**SETTINGS).fit(frame[OBSERVED], frame["s"])
        fit = time.perf_counter() - t0
        risk = est.score_samples(frame[OBSERVED])
        pd.DataFrame({"risk": risk}).to_parquet(out)
    else:
        fit = 0.0
    total = time.perf_counter() - t0
    print(json.dumps({"fit_s": fit, "total_s": total}))


def run_case(case: str, path: Path, out: Path) -> dict[str, Any]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = ["/usr/bin/time", "-v", sys.executable, __file__, "--child", case, str(path), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if proc.returncode != 0 or rss is None:
        raise RuntimeError(f"{case} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    timing = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"peak_rss_mib": int(rss.group(1)) / 1024, **timing}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--cases", nargs="+", default=["stream", "memory"])
    parser.add_argument("--child", nargs=3, metavar=("CASE", "PATH", "OUT"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    tmp = Path(tempfile.mkdtemp(prefix="privwatch-bench-stream-", dir="/tmp"))
    results: dict[str, Any] = {"settings": {**SETTINGS, "hidden": list(SETTINGS["hidden"])}}
    try:
        results["import"] = run_case("import", tmp / "none", tmp / "none")
        print("import", results["import"], flush=True)
        for rows in args.rows:
            path = tmp / f"t{rows}.parquet"
            write_parquet(path, rows)
            size = path.stat().st_size / 2**20
            for case in args.cases:
                res = run_case(case, path, tmp / "scores.parquet")
                results[f"{case}_{rows}"] = {"file_mib": size, **res}
                print(case, rows, results[f"{case}_{rows}"], flush=True)
            path.unlink()
    finally:
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    print("wrote", write("neural_stream", results))


if __name__ == "__main__":
    main()
