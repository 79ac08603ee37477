"""A real ``privwatch serve`` (the command, in its own process, uvicorn on 127.0.0.1 and a
free port), its log captured to a file, stopped with SIGTERM after the test."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

TOKEN = "s3cret-test-token"
#: A value that appears in the uploaded tables only: it must never reach the server's log.
CANARY = "Zq7CanaryValue"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    data_dir: Path
    log: Path
    proc: subprocess.Popen[bytes]
    headers: dict[str, str] = field(default_factory=dict)

    def client(self, **kw: Any) -> Any:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=60, **kw)

    def wait(self, job_id: str, collection: str = "audits", timeout: float = 120) -> Any:
        """Poll a job until it leaves queued/running; its JSON view."""
        end = time.monotonic() + timeout
        with self.client() as c:
            while time.monotonic() < end:
                job = c.get(f"/api/{collection}/{job_id}").json()
                if job["status"] not in ("queued", "running"):
                    return job
                time.sleep(0.2)
        raise AssertionError(f"job {job_id} did not finish in {timeout} s")

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextlib.contextmanager
def start_server(data_dir: Path, *args: str, token: str | None = None) -> Iterator[Server]:
    port = free_port()
    log = data_dir.parent / f"{data_dir.name}-server-{port}.log"
    cmd = [
        sys.executable,
        "-m",
        "privwatch",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *args,
    ]
    env = {k: v for k, v in os.environ.items() if k != "PRIVWATCH_TOKEN"}
    if token is not None:
        cmd += ["--token", token]
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    server = Server(
        f"http://127.0.0.1:{port}",
        data_dir,
        log,
        proc,
        {"Authorization": f"Bearer {token}"} if token else {},
    )
    try:
        end = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"the server stopped: {server.log_text()}"
            try:
                if httpx.get(server.url + "/api/jobs", headers=server.headers).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < end, "the server did not start in 60 s"
            time.sleep(0.2)
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def small_table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A small table with a sensitive column, two observed ones and the canary in a column
    that is not audited and in one observed value."""
    rng = np.random.default_rng(seed)
    s = rng.choice(["a", "b"], n)
    x = np.where(rng.random(n) < 0.7, s, rng.choice(["a", "b"], n))
    return pd.DataFrame(
        {
            "s": s,
            "x": [f"{v}{CANARY}" if i % 50 == 0 else v for i, v in enumerate(x)],
            "z": rng.choice(["p", "q", "r"], n),
            "note": [f"{CANARY}-{i}" for i in range(n)],
        }
    )


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("root")
    small_table().to_csv(folder / "small.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[Server]:
    """A server with a token, an allowed root, a 1 MiB upload limit and one job at a time."""
    data = tmp_path_factory.mktemp("serve") / "data"
    with start_server(
        data, "--allow-root", str(root), "--max-upload-mb", "1", "--jobs", "2", token=TOKEN
    ) as s:
        yield s
