"""The watchdog tradeoff curve behind the proposed epsilon, base against new (issue #42 item 2).

Each side runs in its own process with its own ``src`` (``--base``: a ``git archive`` copy of
the commit before; ``--new``: this tree) on the same inputs, one after the other, and reports
CPU seconds of the process (``time.process_time``; the machine is shared) with the load:

- ``engine TABLE``: a pickled folded count table (``bench_fixed_part.synth_table`` or
  ``duckdb_table``): its joint (``_route_engine._codes`` / ``_joint``, not timed), then
  ``propose_epsilon`` (the engine route's tradeoff curve, 40 thresholds); with ``--decide``
  also the whole ``EngineRoute.decide`` (``bench_fixed_part.decide_once``, epsilon 0.5).
- ``memory``: the in-memory route's curve (``audit._steps.tradeoff_curve`` of the plug-in
  watchdog) on ``bench_census_audit.census_like(30,000)``, sensitive race, nine columns.

The curves are compared: the watchdog columns bit for bit, the ``release_*`` (leakage report)
columns by their largest difference relative to max(|value|, 1).

Run: ``python benchmarks/bench_tradeoff_curve.py --base /tmp/cv/base/src --new src
--tables /tmp/fx/tables/s1e8.pkl /tmp/fx/tables/d5e6.pkl [--decide] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
OBS = [f"x{i}" for i in range(1, 7)]


def _best(fn: Any, repeat: int) -> tuple[Any, float]:
    """The result and the smallest CPU seconds of ``repeat`` calls."""
    best, out = float("inf"), None
    for _ in range(repeat):
        c0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - c0)
    return out, best


def child(kind: str, table: str, repeat: int, decide: bool, dump: str) -> None:
    """One side: time the curve (and the decide), dump the curve, print JSON."""
    import privwatch

    out: dict[str, Any] = {"src": str(Path(privwatch.__file__).parent), "load": os.getloadavg()}
    if kind == "engine":
        from privwatch.audit._route_engine import _codes, _joint, propose_epsilon

        counts = pickle.load(open(table, "rb"))  # noqa: SIM115
        joint = _joint(counts, _codes(counts, ["s"]), _codes(counts, OBS))
        (eps, _, curve), cpu = _best(lambda: propose_epsilon(joint), repeat)
        out.update(shape=list(joint.shape), proposed=eps, curve_cpu_s=round(cpu, 4))
        if decide:
            sys.path.insert(0, str(HERE))
            import bench_fixed_part

            r = bench_fixed_part.decide_once(counts, 0.5, 0)
            out.update(decide_cpu_s=r["cpu_s"], decide_wall_s=r["wall_s"], status=r["status"],
                       information_nats=r["information_nats"])  # fmt: skip
    else:
        sys.path.insert(0, str(HERE))
        from bench_census_audit import census_like  # type: ignore[import-not-found]

        from privwatch.audit._steps import estimate_log_lift, tradeoff_curve

        frame = census_like(30_000)
        cols = [c for c in frame.columns if c != "race"]
        probe, risk, grid = estimate_log_lift(frame, "race", cols, None, None, 0)
        curve, cpu = _best(lambda: tradeoff_curve(probe, True, risk, frame["race"], grid), repeat)
        out.update(shape=list(probe.joint_.p.shape), curve_cpu_s=round(cpu, 4))
    out["load_after"] = os.getloadavg()
    curve.to_pickle(dump)
    print(json.dumps(out))


def _compare(base: pd.DataFrame, new: pd.DataFrame) -> dict[str, Any]:
    assert list(base.columns) == list(new.columns)
    watchdog = [c for c in base.columns if not c.startswith("release_")]
    same = all(np.array_equal(base[c], new[c], equal_nan=True) for c in watchdog)
    worst, where = 0.0, ""
    for c in base.columns:
        if c in watchdog:
            continue
        b, n = base[c].to_numpy(float), new[c].to_numpy(float)
        inf = np.isinf(b) | np.isinf(n)
        assert np.array_equal(b[inf], n[inf]), c
        d = np.abs(b[~inf] - n[~inf]) / np.maximum(np.abs(b[~inf]), 1.0)
        if d.size and d.max() > worst:
            worst, where = float(d.max()), c
    return {"watchdog_columns_identical": same, "release_max_diff": worst, "at": where}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="the src folder of the base code")
    ap.add_argument("--new", default=str(HERE.parent / "src"))
    ap.add_argument("--tables", nargs="*", default=[])
    ap.add_argument("--memory", action="store_true", help="also the in-memory route's curve")
    ap.add_argument("--decide", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=3, metavar=("KIND", "TABLE", "DUMP"))
    args = ap.parse_args()
    if args.child:
        kind, table, dump = args.child
        child(kind, table, args.repeat, args.decide, dump)
        return
    if args.base is None:
        ap.error("--base is required")
    jobs = [("engine", t) for t in args.tables] + ([("memory", "-")] if args.memory else [])
    for kind, table in jobs:
        found = {}
        for side, src in (("base", args.base), ("new", args.new)):
            dump = f"/tmp/bench_tradeoff_{side}.pkl"
            cmd = [sys.executable, __file__, "--child", kind, table, dump]
            cmd += ["--repeat", str(args.repeat)] + (["--decide"] if args.decide else [])
            env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            found[side] = json.loads(proc.stdout.strip().splitlines()[-1])
            found[side]["curve"] = pd.read_pickle(dump)
        ratio = found["base"]["curve_cpu_s"] / max(found["new"]["curve_cpu_s"], 1e-9)
        report = {"kind": kind, "table": table, "curve_ratio": round(ratio, 1)}
        report.update(_compare(found["base"].pop("curve"), found["new"].pop("curve")))
        report.update(base=found["base"], new=found["new"])
        print(json.dumps(report))


if __name__ == "__main__":
    main()
