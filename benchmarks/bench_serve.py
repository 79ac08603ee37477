"""``privwatch serve`` under load, and an audit through the app against the CLI (issue #43).

1. 20 small audits (400 records, uploaded) posted at once to a server with ``--jobs 2``: all
   must finish ``done``; the wall time, and the server process's resident memory before and
   after (from /proc).
2. The COMPAS audit (``--dataset compas``) through the API, posted to a warm server and polled
   until done, against ``privwatch audit --dataset compas`` in a fresh process (best of n).

Writes benchmarks/results/serve.json. Run with ``nice -n 10 python benchmarks/bench_serve.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.serve.conftest import small_table, start_server

OUT = Path(__file__).parent / "results" / "serve.json"
SPEC = {"sensitive": "s", "observed": ["x", "z"], "epsilon": 1.0, "checks": False, "folds": 0}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load(n: int = 20, jobs: int = 2) -> dict[str, object]:
    body = small_table().to_csv(index=False).encode()
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_server(Path(tmp) / "data", "--jobs", str(jobs)) as s,
    ):
        before = rss_mib(s.proc.pid)
        t0 = time.perf_counter()

        def one(i: int) -> str:
            r = httpx.post(
                s.url + "/api/audits",
                files={"file": (f"t{i}.csv", body, "text/csv")},
                data={"spec": json.dumps(SPEC)},
                timeout=60,
            )
            assert r.status_code == 202, r.text
            return str(r.json()["id"])

        with ThreadPoolExecutor(n) as pool:
            ids = list(pool.map(one, range(n)))
        states = [s.wait(i, timeout=600)["status"] for i in ids]
        wall = time.perf_counter() - t0
        after = rss_mib(s.proc.pid)
    return {
        "audits": n,
        "jobs": jobs,
        "done": states.count("done"),
        "lost": n - len(states),
        "wall_s": round(wall, 2),
        "server_rss_mib_before": round(before, 1),
        "server_rss_mib_after": round(after, 1),
    }


def app_vs_cli(repeats: int = 3) -> dict[str, object]:
    """Interleaved (app, CLI, app, CLI, ...) so that both see the same load."""
    app, cli = [], []
    with tempfile.TemporaryDirectory() as tmp, start_server(Path(tmp) / "data") as s:
        first = httpx.post(s.url + "/api/audits", json={"dataset": "compas"}).json()["id"]
        s.wait(first, timeout=600)  # the fork server warm
        for k in range(repeats):
            t0 = time.perf_counter()
            job = s.wait(
                httpx.post(s.url + "/api/audits", json={"dataset": "compas"}).json()["id"],
                timeout=600,
            )
            app.append(time.perf_counter() - t0)
            assert job["status"] == "done"
            t0 = time.perf_counter()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "privwatch",
                    "audit",
                    "--dataset",
                    "compas",
                    "--out",
                    str(Path(tmp) / f"cli{k}"),
                    "--quiet",
                ],
                check=False,
            )
            cli.append(time.perf_counter() - t0)
            assert done.returncode in (0, 3) and (Path(tmp) / f"cli{k}" / "release.csv").is_file()
    return {
        "app_s": round(min(app), 2),
        "cli_s": round(min(cli), 2),
        "ratio": round(min(app) / min(cli), 2),
        "repeats": repeats,
        "app_all_s": [round(t, 2) for t in app],
        "cli_all_s": [round(t, 2) for t in cli],
    }


if __name__ == "__main__":
    result = {"load": load(), "compas": app_vs_cli()}
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
