"""The web app's pages without a browser (forms posted as a browser would): upload, columns,
run, results, a check, history and compare."""

from __future__ import annotations

import html

from .conftest import CANARY, Server, small_table


def _run_form(server: Server) -> str:
    body = small_table().to_csv(index=False).encode()
    with server.client() as c:
        r = c.post("/sources", files={"file": ("mine.csv", body, "text/csv")})
        assert r.status_code == 303 and r.headers["location"].startswith("/columns?upload=")
        page = c.get(r.headers["location"])
        assert page.status_code == 200
        assert "quasi-identifier candidate" in page.text  # z: three values
        assert "identifier-like: drop" in page.text  # note: a value per record
        form = {
            "upload": r.headers["location"].split("upload=")[1].split("&")[0],
            "name": "mine.csv",
            "sensitive": "s",
            "observed": ["x", "z"],
            "epsilon": "1",
            "disclosure": "both",
            "estimator": "plugin",
            "missing": "error",
        }
        r = c.post("/run", data=form)
        assert r.status_code == 303, r.text
        return str(r.headers["location"].rsplit("/", 1)[1])


def test_upload_columns_run_results(server: Server) -> None:
    job = server.wait(_run_form(server))
    assert job["status"] == "done"
    assert job["command"].startswith("privwatch audit mine.csv --sensitive s --observed x,z")
    with server.client() as c:
        page = c.get(f"/jobs/{job['id']}").text
    assert 'id="verdict"' in page and ("MET" in page)
    assert f"/api/audits/{job['id']}/files/release.csv" in page
    assert "[audit]" in page and 'data = "mine.csv"' in html.unescape(page)
    assert CANARY not in server.log_text()


def test_check_page_history_and_compare(server: Server) -> None:
    original = small_table()[["s", "x", "z"]]
    release = original.assign(x="*")
    with server.client() as c:
        r = c.post(
            "/checks",
            files={
                "original": ("o.csv", original.to_csv(index=False).encode(), "text/csv"),
                "release": ("r.csv", release.to_csv(index=False).encode(), "text/csv"),
            },
            data={"sensitive": "s", "epsilon": "1"},
        )
        assert r.status_code == 303, r.text
        check_id = r.headers["location"].rsplit("/", 1)[1]
    assert server.wait(check_id, "checks")["status"] == "done"
    a, b = server.wait(_run_form(server)), server.wait(_run_form(server))
    with server.client() as c:
        assert check_id in c.get("/history").text
        page = c.get("/compare", params=[("id", a["id"]), ("id", b["id"])]).text
    assert 'id="compare"' in page and page.count("information kept") == 1


def test_hierarchy_preview_and_an_uploaded_arx_hierarchy(server: Server) -> None:
    body = small_table().to_csv(index=False).encode()
    with server.client() as c:
        r = c.post("/sources", files={"file": ("mine.csv", body, "text/csv")})
        page = c.get(r.headers["location"]).text
        assert "z: 2 levels" in page  # p, q, r, then *
        upload = r.headers["location"].split("upload=")[1].split("&")[0]
        arx = b"p;pq;*\nq;pq;*\nr;r;*\n"
        r = c.post(
            "/run",
            data={"upload": upload, "sensitive": "s", "observed": ["x", "z"], "epsilon": "1"},
            files={"hierarchy_z": ("z.csv", arx, "text/csv")},
        )
        assert r.status_code == 303, r.text
        job = server.wait(r.headers["location"].rsplit("/", 1)[1])
        bad = c.post(
            "/run",
            data={"upload": upload, "sensitive": "s", "observed": ["x", "z"]},
            files={"hierarchy_z": ("z.csv", b"p;pq\nq;qq;*\n", "text/csv")},
        )
    assert job["status"] == "done", job
    assert "--hierarchy z=" in job["command"]
    assert job["result"]["release"]["generalisation"]["z"]["levels"] == 3
    assert bad.status_code == 422


def test_each_settings_help_is_the_reports_glossary_entry(server: Server) -> None:
    import re

    from privwatch.report import GLOSSARY
    from privwatch.serve._pages import DISCLOSURE_TERM, SETTINGS

    with server.client() as c:
        page = c.get("/columns", params={"dataset": "compas"}).text
    helps = {
        m.group(1): html.unescape(m.group(2))
        for m in re.finditer(r'<small class="help" id="help-([a-z_]+)">(.*?)</small>', page)
    }
    expected = {name: GLOSSARY[term] for name, _, term, _ in SETTINGS}
    expected["disclosure"] = GLOSSARY[DISCLOSURE_TERM]
    assert helps == expected
