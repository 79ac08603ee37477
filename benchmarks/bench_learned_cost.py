"""Cost of the learned watchdog (issue #41 item 7): ``privwatch audit --dataset compas
--estimator classifier`` quiet and beside one CPU-bound process, with torch's default threads
(``PRIVWATCH_THREADS`` = the cores, as before the cap) and with the cap
(:func:`privwatch._torch.fit_threads`: the free cores); then 100,000 x 10 synthetic records.

    .venv/bin/python benchmarks/bench_learned_cost.py [--skip-large] [--capped-only] [--out F]

Writes benchmarks/results/learned_cost.json. The load average beside each timing is read just
before the run (the machine is shared)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The CLI of the interpreter running this script (``python -m privwatch``: the checkout on
#: PYTHONPATH, a worktree included).
PRIVWATCH = [sys.executable, "-m", "privwatch"]
#: A run longer than this is stopped (the uncapped run beside a busy process took minutes).
LIMIT = 300


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def compas(threads: str | None, busy: bool) -> dict[str, object]:
    env = dict(os.environ)
    env.pop("PRIVWATCH_THREADS", None)
    if threads is not None:
        env["PRIVWATCH_THREADS"] = threads
    spinner = None
    if busy:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(1.0)
    load = _load()
    try:
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                code: object = subprocess.run(
                    [*PRIVWATCH, "audit", "--dataset", "compas", "--estimator", "classifier",
                     "--epsilon", "1", "--out", str(Path(out) / "a")],
                    env=env, capture_output=True, text=True, timeout=LIMIT,
                ).returncode  # fmt: skip
            except subprocess.TimeoutExpired:
                code = f"killed after {LIMIT} s"
            seconds = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the spinner is not reaped yet
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    return {
        "case": "compas classifier", "threads": threads or "capped (fit_threads)",
        "busy": busy, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
        "load_before": load, "load_after": _load(), "exit": code,
    }  # fmt: skip


def large() -> dict[str, object]:
    import warnings

    import numpy as np
    import pandas as pd

    from privwatch import audit

    g = np.random.default_rng(0)
    n, d = 100_000, 10
    x = g.standard_normal((n, d))
    logit = -1.0 + x @ np.linspace(0.4, -0.3, d)
    s = (g.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    df = pd.DataFrame(x, columns=[f"x{i}" for i in range(d)]).assign(s=s)
    load = _load()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = audit.run(source=df, sensitive="s", epsilon=0.5, estimator="classifier", checks=False)
    return {
        "case": "100,000 x 10 synthetic, classifier", "threads": "capped (fit_threads)",
        "busy": False, "seconds": round(time.perf_counter() - t, 1), "load_before": load,
        "status": r.leakage["status"],
    }  # fmt: skip


def main() -> None:
    rows = []
    cases = ((None, False), (None, True)) if "--capped-only" in sys.argv else (
        (None, False), ("2", False), ("2", True), (None, True)
    )  # fmt: skip
    for threads, busy in cases:
        rows.append(compas(threads, busy))
        print(rows[-1], flush=True)
    if "--skip-large" not in sys.argv:
        rows.append(large())
        print(rows[-1], flush=True)
    out = ROOT / "benchmarks" / "results" / "learned_cost.json"
    if "--out" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--out") + 1])
    out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
