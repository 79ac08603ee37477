"""A bounded load test: 20 small audits posted at once to a server running 2 at a time all
finish, none lost, and the server process's memory stays bounded (the jobs' memory is the
workers')."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .conftest import small_table, start_server

SPEC = {"sensitive": "s", "observed": ["x", "z"], "epsilon": 1.0, "checks": False, "folds": 0}


def _rss_mib(pid: int) -> float:
    line = next(
        x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:")
    )
    return int(line.split()[1]) / 1024


@pytest.mark.slow
def test_twenty_concurrent_audits_all_finish(tmp_path: Path) -> None:
    import httpx

    body = small_table().to_csv(index=False).encode()
    with start_server(tmp_path / "data", "--jobs", "2") as s:
        before = _rss_mib(s.proc.pid)

        def post(i: int) -> str:
            r = httpx.post(
                s.url + "/api/audits",
                files={"file": (f"t{i}.csv", body, "text/csv")},
                data={"spec": json.dumps(SPEC)},
                timeout=60,
            )
            assert r.status_code == 202, r.text
            return str(r.json()["id"])

        with ThreadPoolExecutor(20) as pool:
            ids = list(pool.map(post, range(20)))
        jobs = [s.wait(i, timeout=900) for i in ids]
        after = _rss_mib(s.proc.pid)
        listed = {j["id"] for j in httpx.get(s.url + "/api/jobs").json()}
    assert [j["status"] for j in jobs] == ["done"] * 20
    assert len(set(ids)) == 20 and set(ids) <= listed
    assert after < before + 100, f"server memory grew from {before:.0f} to {after:.0f} MiB"
