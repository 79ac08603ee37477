"""What a job leaves behind: its uploads go with it (unless another job names them), uploads
no job names are removed at start or after their age, and a killed server leaves no worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privwatch.serve._store import JobStore

from .conftest import Server, small_table, start_server

SPEC = {"sensitive": "s", "observed": ["x", "z"], "epsilon": 1.0, "checks": False, "folds": 0}


def _job_json(server: Server, job_id: str) -> dict[str, object]:
    return json.loads((server.data_dir / "jobs" / job_id / "job.json").read_text())  # type: ignore[no-any-return]


def test_deleting_a_job_removes_its_upload_unless_another_job_names_it(server: Server) -> None:
    body = small_table().to_csv(index=False).encode()
    with server.client() as c:
        r = c.post(
            "/api/audits",
            files={"file": ("t.csv", body, "text/csv")},
            data={"spec": json.dumps(SPEC)},
        )
        first = server.wait(r.json()["id"])
        upload = Path(_job_json(server, first["id"])["source"]["path"])  # type: ignore[index]
        assert upload.parent == server.data_dir / "uploads" and upload.is_file()
        # the same audit at another epsilon (the results page's rerun) names the same upload
        r = c.post(f"/jobs/{first['id']}/rerun", data={"epsilon": "2"})
        assert r.status_code == 303, r.text
        second = server.wait(r.headers["location"].rsplit("/", 1)[1])
        assert _job_json(server, second["id"])["source"]["path"] == str(upload)  # type: ignore[index]
        assert c.delete(f"/api/audits/{first['id']}").status_code == 200
        assert upload.is_file()  # the second job still names it
        r = c.post(f"/jobs/{second['id']}/delete")  # the app's delete
        assert r.status_code == 303 and r.headers["location"] == "/history"
        assert c.get(f"/api/audits/{second['id']}").status_code == 404
    assert not upload.exists()


def test_a_check_jobs_uploads_go_with_it(server: Server) -> None:
    original = small_table()[["s", "x", "z"]]
    with server.client() as c:
        r = c.post(
            "/api/checks",
            files={
                "original": ("o.csv", original.to_csv(index=False).encode(), "text/csv"),
                "release": ("r.csv", original.assign(x="*").to_csv(index=False).encode()),
            },
            data={"spec": json.dumps({"sensitive": "s", "folds": 0, "checks": False})},
        )
        job = server.wait(r.json()["id"], "checks")
        source = _job_json(server, job["id"])["source"]
        paths = [Path(source[k]) for k in ("original", "release")]  # type: ignore[index]
        assert all(p.is_file() for p in paths)
        assert c.delete(f"/api/checks/{job['id']}").status_code == 200
    assert not any(p.exists() for p in paths)


def test_uploads_no_job_names_are_removed_at_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    body = small_table().to_csv(index=False).encode()
    with start_server(data) as s, s.client() as c:
        # uploaded on the pages but never audited
        r = c.post("/sources", files={"file": ("mine.csv", body, "text/csv")})
        orphan = data / "uploads" / r.headers["location"].split("upload=")[1].split("&")[0]
        r = c.post(
            "/api/audits",
            files={"file": ("t.csv", body, "text/csv")},
            data={"spec": json.dumps(SPEC)},
        )
        kept = Path(_job_json(s, s.wait(r.json()["id"])["id"])["source"]["path"])  # type: ignore[index]
        assert orphan.is_file() and kept.is_file()
    with start_server(data):
        assert not orphan.exists()
        assert kept.is_file()


def test_the_store_sweeps_unnamed_uploads_by_age(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    named, old, new = (store.uploads / f"{n}.csv" for n in ("named", "old", "new"))
    for p in (named, old, new):
        p.write_text("a\n1\n")
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    os.utime(named, (hour_ago, hour_ago))
    store.create("audit", {}, {"path": str(named), "name": "n.csv"}, None, None)
    assert store.sweep_uploads(max_age_s=1800) == ["old.csv"]
    assert named.is_file() and new.is_file()
    assert store.sweep_uploads() == ["new.csv"]
    assert named.is_file()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_killed_server_leaves_no_worker_behind(tmp_path: Path) -> None:
    with start_server(tmp_path / "data") as s, s.client() as c:
        # a learned estimator on COMPAS runs long enough to be running when the server dies
        job_id = c.post("/api/audits", json={"dataset": "compas", "estimator": "mlp"}).json()["id"]
        end = time.monotonic() + 60
        while c.get(f"/api/audits/{job_id}").json()["status"] != "running":
            assert time.monotonic() < end, "the job did not start in 60 s"
            time.sleep(0.1)
        pid = int(_job_json(s, job_id)["pid"])  # type: ignore[call-overload]
        assert _alive(pid)
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait(10)
        end = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < end:
            time.sleep(0.1)
        survived = _alive(pid)
        if survived:
            os.kill(pid, signal.SIGKILL)
    assert not survived, "the worker outlived its server by more than 5 s"


def test_a_worker_watches_the_servers_pid_as_well_as_its_parent() -> None:
    # the "server" is another process than the worker's parent: only the watch thread sees it go
    server = subprocess.Popen(["sleep", "60"])
    code = (
        "import time; from privwatch.serve._worker import die_with; "
        f"die_with({server.pid}); time.sleep(60)"
    )
    worker = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(1.0)
        assert worker.poll() is None
        server.kill()
        server.wait()
        assert worker.wait(5) == -signal.SIGKILL
    finally:
        for p in (server, worker):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_refused_request_leaves_no_upload(server: Server) -> None:
    uploads = server.data_dir / "uploads"
    before = set(uploads.iterdir())
    original = small_table()[["s", "x", "z"]].to_csv(index=False).encode()
    with server.client() as c:
        # the original is stored before the release is found missing (API and page alike)
        r = c.post("/api/checks", files={"original": ("o.csv", original, "text/csv")})
        assert r.status_code == 422, r.text
        r = c.post("/checks", files={"original": ("o.csv", original, "text/csv")})
        assert r.status_code == 422, r.text
        # a bad spec after a good upload
        r = c.post(
            "/api/audits",
            files={"file": ("t.csv", original, "text/csv")},
            data={"spec": json.dumps({"sensitive": "s", "epsilon": -1})},
        )
        assert r.status_code == 422, r.text
    assert set(uploads.iterdir()) == before
