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


def test_the_results_page_shows_the_classic_measures_and_the_attack(server: Server) -> None:
    import json
    import re

    from privwatch.report import attack_rows, classic_rows

    name = "s<i>x</i>"  # a column name with markup: shown escaped, never as markup
    body = small_table().rename(columns={"s": name}).to_csv(index=False).encode()
    spec = {"sensitive": name, "observed": ["x", "z"], "epsilon": 1.0, "folds": 0}
    with server.client() as c:
        r = c.post(
            "/api/audits",
            files={"file": ("t.csv", body, "text/csv")},
            data={"spec": json.dumps(spec)},
        )
        job = server.wait(r.json()["id"])
        assert job["status"] == "done", job
        page = c.get(f"/jobs/{job['id']}").text
    leakage = job["result"]
    assert leakage["classic"] and leakage["attack"]
    sections = {
        m.group(1): m.group(2)
        for m in re.finditer(r'<section id="(classic|attack)">(.*?)</section>', page, re.S)
    }
    assert set(sections) == {"classic", "attack"}
    for section in sections.values():
        assert name not in section and CANARY not in section  # escaped; no record's value
    cells = [html.unescape(t) for t in re.findall(r"<td[^>]*>(.*?)</td>", sections["classic"])]
    for row in classic_rows(leakage["classic"]):  # the report's own rows, value for value
        assert row["release"] in cells and row["input"] in cells
        assert any(
            html.unescape(row["name"]) in html.unescape(s)
            for s in sections["classic"].split("</tr>")
        )
    assert html.escape(name) in sections["classic"]
    text = html.unescape(sections["attack"])
    for row in attack_rows(leakage["attack"]):
        assert row["attribute"] == name
        assert f"{row['targets']} ({row['targets_ci']})" in text
        assert row["bayes"] in text and f"≤ {row['bound']}" in text
