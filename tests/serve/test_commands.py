"""Every job shows the one command that reproduces it: a check's ``privwatch check ...`` and an
apply's ``privwatch apply ...``, run here, give the job's own files."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from .conftest import Server, small_table


def _run(command: str, cwd: Path, out: Path) -> None:
    args = shlex.split(command)
    assert args[0] == "privwatch"
    subprocess.run(
        [sys.executable, "-m", "privwatch", *args[1:], "--out", str(out), "--quiet"],
        cwd=cwd,
        check=False,
        timeout=300,
    )


def _without_date(leakage: dict[str, object]) -> dict[str, object]:
    stamp = dict(leakage["stamp"])  # type: ignore[arg-type]
    stamp.pop("date")
    return {**leakage, "stamp": stamp}


def test_a_check_shows_the_privwatch_check_command_that_reproduces_it(
    server: Server, tmp_path: Path
) -> None:
    original = small_table()[["s", "x", "z"]]
    release = original.assign(x="*")
    original.to_csv(tmp_path / "orig data.csv", index=False)
    release.to_csv(tmp_path / "r.csv", index=False)
    with server.client() as c:
        r = c.post(
            "/api/checks",
            files={
                "original": ("orig data.csv", (tmp_path / "orig data.csv").read_bytes()),
                "release": ("r.csv", (tmp_path / "r.csv").read_bytes()),
            },
            data={"spec": json.dumps({"sensitive": "s", "folds": 0, "checks": False})},
        )
        job = server.wait(r.json()["id"], "checks")
        assert job["status"] == "done", job
        api = c.get(f"/api/checks/{job['id']}/files/leakage.json").json()
        page = c.get(f"/jobs/{job['id']}").text
    assert (
        job["command"]
        == "privwatch check 'orig data.csv' r.csv --sensitive s --folds 0 --no-checks"
    )
    assert 'id="command"' in page
    _run(job["command"], tmp_path, tmp_path / "cli")
    cli = json.loads((tmp_path / "cli" / "leakage.json").read_text())
    assert _without_date(api) == _without_date(cli)


def test_an_apply_shows_the_privwatch_apply_command_that_reproduces_it(
    server: Server, tmp_path: Path
) -> None:
    spec = {"sensitive": "s", "observed": ["x", "z"], "epsilon": 1.0, "checks": False, "folds": 0}
    with server.client() as c:
        r = c.post(
            "/api/audits",
            files={"file": ("t.csv", small_table().to_csv(index=False).encode())},
            data={"spec": json.dumps(spec)},
        )
        audit = server.wait(r.json()["id"])
        (tmp_path / "m.json").write_bytes(
            c.get(f"/api/audits/{audit['id']}/files/mechanism.json").content
        )
        small_table(50, seed=3).to_csv(tmp_path / "new.csv", index=False)
        r = c.post(
            "/api/apply",
            files={
                "mechanism": ("m.json", (tmp_path / "m.json").read_bytes()),
                "data": ("new.csv", (tmp_path / "new.csv").read_bytes()),
            },
            data={"seed": "7"},
        )
        job = server.wait(r.json()["id"], "apply")
        assert job["status"] == "done", job
        api = c.get(f"/api/apply/{job['id']}/files/release.csv").content
    assert job["command"] == "privwatch apply m.json new.csv --seed 7"
    _run(job["command"], tmp_path, tmp_path / "cli")
    assert (tmp_path / "cli" / "release.csv").read_bytes() == api
