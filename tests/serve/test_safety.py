"""The safety rules of ``privwatch serve``, one test each, against a real server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CANARY, TOKEN, Server, small_table, start_server

SPEC = {"sensitive": "s", "observed": ["x", "z"], "epsilon": 1.0, "checks": False, "folds": 0}


def test_binds_loopback_by_default(tmp_path: Path) -> None:
    with start_server(tmp_path / "data") as s:
        assert s.url.startswith("http://127.0.0.1:")
        assert "Uvicorn running on http://127.0.0.1:" in s.log_text()


def test_another_address_without_a_token_is_refused_at_start(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "privwatch",
            "serve",
            "--host",
            "0.0.0.0",
            "--data-dir",
            str(tmp_path / "d"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert r.returncode == 2 and "without a token" in r.stderr and "--token" in r.stderr


def test_every_request_must_carry_the_token(server: Server) -> None:
    import httpx

    for path in ("/", "/api/jobs", "/docs", "/static/app.js", "/openapi.json"):
        assert httpx.get(server.url + path).status_code == 401, path
        wrong = {"Authorization": "Bearer " + TOKEN[:-1] + "x"}
        assert httpx.get(server.url + path, headers=wrong).status_code == 401, path
        assert httpx.get(server.url + path, headers=server.headers).status_code == 200, path
    r = httpx.post(server.url + "/api/audits", json={"dataset": "compas"})
    assert r.status_code == 401
    assert (server.data_dir / "jobs").exists() and not any(
        json.loads(p.read_text()).get("source", {}).get("dataset") == "compas"
        for p in (server.data_dir / "jobs").glob("*/job.json")
        if json.loads(p.read_text())["status"] == "queued"
    )


def test_an_upload_over_the_limit_gets_413(server: Server) -> None:
    big = b"s,x\n" + b"a,b\n" * (300_000)  # 1.2 MB > the server's 1 MiB
    before = set((server.data_dir / "uploads").iterdir())
    with server.client() as c:
        r = c.post(
            "/api/audits",
            files={"file": ("big.csv", big, "text/csv")},
            data={"spec": json.dumps(SPEC)},
        )
    assert r.status_code == 413
    assert set((server.data_dir / "uploads").iterdir()) == before


def test_an_upload_is_checked_by_content_and_stored_under_a_generated_name(
    server: Server,
) -> None:
    with server.client() as c:
        r = c.post(
            "/api/audits",
            files={"file": ("t.parquet", b"s,x\na,b\n", "x")},
            data={"spec": json.dumps(SPEC)},
        )
        assert r.status_code == 422 and "not a .parquet" in r.json()["detail"]
        r = c.post(
            "/api/audits",
            files={"file": ("t.exe", b"MZ\x90\x00", "x")},
            data={"spec": json.dumps(SPEC)},
        )
        assert r.status_code == 422
        body = small_table().to_csv(index=False).encode()
        r = c.post(
            "/api/audits",
            files={"file": ("../../evil name.csv", body, "text/csv")},
            data={"spec": json.dumps(SPEC)},
        )
        assert r.status_code == 202
    names = [p.name for p in (server.data_dir / "uploads").iterdir()]
    assert names and all(re.fullmatch(r"[0-9a-f]{32}\.(csv|parquet|xlsx|jsonl)", n) for n in names)
    assert not (server.data_dir.parent / "evil name.csv").exists()


def test_a_download_is_only_one_of_the_jobs_own_files(server: Server) -> None:
    body = small_table().to_csv(index=False).encode()
    with server.client() as c:
        job_id = c.post(
            "/api/audits",
            files={"file": ("t.csv", body, "text/csv")},
            data={"spec": json.dumps(SPEC)},
        ).json()["id"]
        job = server.wait(job_id)
        base = f"/api/audits/{job_id}/files/"
        assert c.get(base + "leakage.json").status_code == 200
        for name in (
            "job.json",
            "progress.json",
            "outcome.json",
            "%2E%2E%2Fjob.json",
            "%2Fetc%2Fpasswd",
            "..%2F..%2Fuploads",
            "out%2Fleakage.json",
        ):
            assert c.get(base + name).status_code == 404, name
        assert c.get(f"/api/audits/{'0' * 32}/files/leakage.json").status_code == 404
    assert job["status"] == "done"


def test_server_paths_outside_the_allowed_root_are_refused(server: Server, root: Path) -> None:
    outside = root.parent / "outside.csv"
    small_table().to_csv(outside, index=False)
    with server.client() as c:
        for path in ("/etc/passwd", "../outside.csv", str(outside), "/proc/self/environ"):
            r = c.post("/api/audits", json={"path": path, **SPEC})
            assert r.status_code == 422, path
        assert (
            c.post("/api/audits", json={"path": str(root / "small.csv"), **SPEC}).status_code == 202
        )
        r = c.post(
            "/api/audits", json={"path": "small.csv", **SPEC, "hierarchies": {"x": "/etc/passwd"}}
        )
        assert r.status_code == 422


def test_no_cell_value_of_an_uploaded_table_reaches_the_log(server: Server) -> None:
    body = small_table().to_csv(index=False).encode()
    with server.client() as c:
        ok = c.post(
            "/api/audits",
            files={"file": (f"{CANARY}.csv", body, "text/csv")},
            data={"spec": json.dumps(SPEC)},
        ).json()["id"]
        bad = c.post(
            "/api/audits",
            files={"file": ("t.csv", body, "text/csv")},
            data={"spec": json.dumps({**SPEC, "observed": ["note"]})},
        ).json()["id"]
        c.get("/columns", params={"upload": "x"})
    jobs = [server.wait(ok), server.wait(bad)]
    assert jobs[0]["status"] == "done"
    uploads = [p.read_text() for p in (server.data_dir / "uploads").glob("*.csv")]
    assert any(CANARY in text for text in uploads)  # the server read the values ...
    log = server.log_text()
    assert "POST /api/audits" in log  # ... and this is its log
    assert CANARY not in log


def test_pages_send_csp_without_inline_scripts_and_nosniff(server: Server) -> None:
    with server.client() as c:
        for path in ("/", "/history", "/docs", "/columns?dataset=compas", "/api/jobs"):
            r = c.get(path)
            assert r.status_code == 200, path
            assert r.headers["x-content-type-options"] == "nosniff"
            csp = r.headers["content-security-policy"]
            script = re.search(r"script-src ([^;]*)", csp)
            assert script and script.group(1).strip() == "'self'" and "unsafe" not in csp
            if r.headers["content-type"].startswith("text/html"):
                scripts = re.findall(r"<script([^>]*)>", r.text)
                assert scripts and all('src="/static/' in s for s in scripts)
                assert not re.search(r"\son[a-z]+=", r.text)  # no inline handlers
                assert "http://" not in r.text.replace(server.url, "") and "https://" not in r.text


def test_assets_are_vendored_no_cdn() -> None:
    package = Path(__file__).resolve().parents[2] / "src" / "privwatch" / "serve"
    for f in [*package.glob("templates/*.j2"), *package.glob("static/*")]:
        text = f.read_text(encoding="utf-8")
        assert not re.search(r"(src|href)=\"(https?:)?//", text), f
        assert not re.search(r"https?://", text), f


@pytest.mark.parametrize("field", ["<script>alert(1)</script>"])
def test_page_content_is_escaped(server: Server, root: Path, field: str) -> None:
    import pandas as pd

    pd.DataFrame({field: ["a", "b"] * 20, "s": ["c", "d"] * 20}).to_csv(
        root / "xss.csv", index=False
    )
    with server.client() as c:
        r = c.get("/columns", params={"path": str(root / "xss.csv")})
    assert r.status_code == 200
    assert field not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text


def test_a_post_from_another_site_is_refused(server: Server) -> None:
    with server.client() as c:
        r = c.post(
            "/api/audits", json={"dataset": "compas"}, headers={"Origin": "http://evil.example"}
        )
        assert r.status_code == 403
        r = c.post(
            "/api/audits", json={"dataset": "compas", "epsilon": -1}, headers={"Origin": server.url}
        )
        assert r.status_code == 422  # same origin: it reaches the API
