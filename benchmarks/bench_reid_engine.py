"""Re-identification risk on the engine route (issue #44 item 6): the audit with and without
the ``reidentification`` block, and the block itself against the folded count.

    python benchmarks/bench_reid_engine.py --rows 10000000 --engine duckdb

The data are bench_scale.py's (``bench_engines.generate``: six observed columns, one
sensitive); the audit runs in-process with ``records=False`` (no labelling) at bench_scale's
epsilon and folds, ``checks`` on (the block) and off (none), alternately, ``--repeat`` times
each; timers around ``engines.count_table`` and the block (``_route_engine._reidentification``).
The block is computed from the folded count table (one row per observed tuple x sensitive value
x fold): no pass over the records.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_engines import generate
from bench_scale import EPSILON, FOLDS, OBS


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--engine", default="duckdb")
    ap.add_argument("--dir", default="/tmp/pwbench")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    import privwatch.audit._route_engine as route
    import privwatch.engines as eng
    from privwatch.audit import run

    path = Path(a.dir) / f"data_{a.rows}.parquet"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        generate(path, a.rows)
    timers = {"count_s": 0.0, "block_s": 0.0}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                timers[name] += time.perf_counter() - t0

        return wrapper

    route.engines.count_table = timed("count_s", eng.count_table)  # type: ignore[attr-defined]
    route._reidentification = timed("block_s", route._reidentification)  # type: ignore[attr-defined]
    rows: list[dict[str, Any]] = []
    for _ in range(a.repeat):
        for checks in (False, True):
            timers.update(count_s=0.0, block_s=0.0)
            t0 = time.perf_counter()
            res = run(
                source=str(path), engine=a.engine, sensitive="s", observed=OBS,
                epsilon=EPSILON, folds=FOLDS, records=False, checks=checks,
            )  # fmt: skip
            total = time.perf_counter() - t0
            block = res.leakage["reidentification"]
            rows.append({"rows": a.rows, "engine": a.engine, "checks": checks, "total_s": total,
                         **timers, "block": None if block is None else {
                             "input_classes": block["input"]["n_classes"],
                             "release_classes": block["release"]["n_classes"]}})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
