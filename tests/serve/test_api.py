"""The HTTP API against a real server: post, follow, download, cancel, delete, restart; an
audit through the API gives the CLI's leakage.json and release.csv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import Server, small_table, start_server

SPEC = {"sensitive": "s", "observed": ["x", "z"], "epsilon": 1.0, "checks": False, "folds": 0}


def _post_upload(server: Server, spec: dict[str, object], name: str = "t.csv") -> str:
    body = small_table().to_csv(index=False).encode()
    with server.client() as c:
        r = c.post(
            "/api/audits", files={"file": (name, body, "text/csv")}, data={"spec": json.dumps(spec)}
        )
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


def test_upload_audit_runs_and_lists_only_its_own_files(server: Server) -> None:
    job = server.wait(_post_upload(server, SPEC))
    assert job["status"] == "done", job
    assert {"leakage.json", "release.csv", "report.html"} <= set(job["files"])
    assert job["result"]["status"] in ("met", "not_met")
    assert job["result"]["summary"]["n_records"] == 400
    assert job["command"].startswith("privwatch audit t.csv --sensitive s --observed x,z")
    with server.client() as c:
        base = f"/api/audits/{job['id']}/files/"
        assert c.get(base + "release.csv").status_code == 200
        for bad in (
            "job.json",
            "audit.toml",
            "..%2Fjob.json",
            "../job.json",
            "%2Fetc%2Fpasswd",
            "out%2Frelease.csv",
            "%2E%2E%2Fjob.json",
            "%2E%2E",
        ):
            assert c.get(base + bad).status_code == 404, bad
        listed = c.get("/api/jobs").json()
    assert job["id"] in [j["id"] for j in listed]


def test_server_path_under_the_root_and_delete(server: Server) -> None:
    with server.client() as c:
        r = c.post("/api/audits", json={"path": "small.csv", **SPEC})
        assert r.status_code == 202, r.text
        job = server.wait(r.json()["id"])
        assert job["status"] == "done"
        assert c.delete(f"/api/audits/{job['id']}").status_code == 200
        assert c.get(f"/api/audits/{job['id']}").status_code == 404
    assert not (server.data_dir / "jobs" / job["id"]).exists()


def test_a_bad_spec_is_refused_before_any_job(server: Server) -> None:
    with server.client() as c:
        r = c.post("/api/audits", json={"dataset": "compas", "epsilon": -1})
        assert r.status_code == 422 and "epsilon" in r.json()["detail"]
        r = c.post("/api/audits", json={"dataset": "compas", "write_table": "/tmp/x.csv"})
        assert r.status_code == 422 and "write_table" in r.json()["detail"]


def test_a_failed_job_says_why(server: Server) -> None:
    job = server.wait(_post_upload(server, {**SPEC, "sensitive": "nope"}))
    assert job["status"] == "failed" and "nope" in job["error"] and job["files"] == []


def test_cancel_kills_the_worker(server: Server) -> None:
    # a learned estimator on COMPAS runs long enough to be cancelled while it runs
    with server.client() as c:
        r = c.post("/api/audits", json={"dataset": "compas", "estimator": "mlp", "epsilon": 1.0})
        job_id = r.json()["id"]
        end = time.monotonic() + 60
        while (job := c.get(f"/api/audits/{job_id}").json())["status"] == "queued":
            assert time.monotonic() < end
            time.sleep(0.1)
        assert job["status"] == "running"
        pid = json.loads((server.data_dir / "jobs" / job_id / "job.json").read_text())["pid"]
        os.kill(pid, 0)  # the worker is alive
        done = c.post(f"/api/audits/{job_id}/cancel").json()
    assert done["status"] == "cancelled" and done["files"] == []
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not (server.data_dir / "jobs" / job_id / "out").exists()


def test_apply_releases_new_records_through_the_audits_mechanism(server: Server) -> None:
    job = server.wait(_post_upload(server, SPEC))
    assert "mechanism.json" in job["files"]
    with server.client() as c:
        mech = c.get(f"/api/audits/{job['id']}/files/mechanism.json").content
        data = small_table(50, seed=3).to_csv(index=False).encode()
        r = c.post(
            "/api/apply",
            files={
                "mechanism": ("m.json", mech, "application/json"),
                "data": ("new.csv", data, "text/csv"),
            },
        )
        assert r.status_code == 202, r.text
    applied = server.wait(r.json()["id"], "apply")
    assert applied["status"] == "done" and "release.csv" in applied["files"]


@pytest.mark.slow
def test_restart_keeps_finished_jobs_and_interrupts_running_ones(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with start_server(data) as s, s.client() as c:
        done = s.wait(
            c.post(
                "/api/audits", json={"dataset": "compas", "epsilon": 1.0, "checks": False}
            ).json()["id"]
        )
        slow = c.post("/api/audits", json={"dataset": "compas", "estimator": "mlp"}).json()["id"]
        while c.get(f"/api/audits/{slow}").json()["status"] != "running":
            time.sleep(0.1)
    with start_server(data) as s, s.client() as c:
        assert c.get(f"/api/audits/{done['id']}").json()["status"] == "done"
        assert c.get(f"/api/audits/{done['id']}/files/release.csv").status_code == 200
        again = c.get(f"/api/audits/{slow}").json()
        assert again["status"] == "interrupted" and again["files"] == []
        assert c.get(f"/api/audits/{slow}/files/leakage.json").status_code == 404


def _without_date(leakage: dict[str, object]) -> dict[str, object]:
    stamp = dict(leakage["stamp"])  # type: ignore[arg-type]
    stamp.pop("date")
    return {**leakage, "stamp": stamp}


@pytest.mark.slow
def test_the_api_and_the_cli_give_the_same_leakage_json(server: Server, tmp_path: Path) -> None:
    spec = {"dataset": "compas", "epsilon": 1.25, "checks": False}
    with server.client() as c:
        job = server.wait(c.post("/api/audits", json=spec).json()["id"])
        api = c.get(f"/api/audits/{job['id']}/files/leakage.json").json()
        api_release = c.get(f"/api/audits/{job['id']}/files/release.csv").content
    assert job["command"] == "privwatch audit --epsilon 1.25 --dataset compas --no-checks"
    out = tmp_path / "cli"
    args = job["command"].split()[1:]
    subprocess.run(
        [sys.executable, "-m", "privwatch", *args, "--out", str(out), "--quiet"],
        check=False,
        timeout=300,
    )
    cli = json.loads((out / "leakage.json").read_text())
    assert _without_date(api) == _without_date(cli)
    assert api_release == (out / "release.csv").read_bytes()


def test_check_judges_a_release_made_elsewhere(server: Server) -> None:
    original = small_table()[["s", "x", "z"]]
    release = original.copy()
    release["x"] = "*"  # everything suppressed: nothing to learn from x
    with server.client() as c:
        r = c.post(
            "/api/checks",
            files={
                "original": ("o.csv", original.to_csv(index=False).encode(), "text/csv"),
                "release": ("r.csv", release.to_csv(index=False).encode(), "text/csv"),
            },
            data={"spec": json.dumps({"sensitive": "s", "folds": 0, "checks": False})},
        )
        assert r.status_code == 202, r.text
    job = server.wait(r.json()["id"], "checks")
    assert job["status"] == "done", job
    assert "check" in job["result"] and "leakage.json" in job["files"]


def test_without_the_extra_the_command_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['fastapi'] = None; sys.argv = ['privwatch', 'serve', "
        f"'--data-dir', {str(tmp_path)!r}]; from privwatch.cli import main; main()"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 2 and "privwatch[serve]" in r.stderr, r.stderr
