"""The outputs of an audit of COMPAS read from a CSV file: leakage.json against its schema, the
stamp, the classic measures and the attack wired in, every record accounted for, plain words in
the report, the verdict told the same way everywhere, and no record's values in the report unless
asked for."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import numpy as np
import pandas as pd
import pytest
from markupsafe import escape
from typer.testing import CliRunner

from privwatch.audit import privwatch_version
from privwatch.cli import app
from privwatch.cli._flags import to_flags
from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.preprocessing import bin_columns
from privwatch.report import SCHEMA

from ._verdicts import assert_verdict_consistent

runner = CliRunner()


@pytest.fixture(scope="module")
def compas_audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real audit of the binned COMPAS table, read from a CSV file by the CLI."""
    base = tmp_path_factory.mktemp("compas")
    data = base / "compas.csv"
    frame = bin_columns(load_compas()[["race", *COMPAS_OBSERVED]], COMPAS_BINS)
    frame.to_csv(data, index=False)
    out = base / "out"
    res = runner.invoke(app, ["audit", str(data), "--sensitive", "race", "--out", str(out)])
    (base / "stdout.txt").write_text(res.stdout)
    # MET or NOT MET is the held-out estimator's call (issue 32): the rules must agree with it
    assert_verdict_consistent(json.loads((out / "leakage.json").read_text()), res.exit_code)
    return data, out


def test_leakage_json_validates_against_published_schema(compas_audit: tuple[Path, Path]) -> None:
    data, out = compas_audit
    leak = json.loads((out / "leakage.json").read_text())
    jsonschema.validate(leak, SCHEMA)
    stamp = leak["stamp"]
    assert stamp["input_name"] == "compas.csv"
    assert stamp["input_sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert (stamp["input_rows"], stamp["input_columns"]) == (5278, 6)
    assert stamp["privwatch_version"] == privwatch_version()
    # the schema is not vacuous: a broken document fails it
    broken = dict(leak, status="maybe")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)
    broken = dict(leak)
    del broken["stamp"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)


def test_classic_measures_of_the_release_match_its_classes(compas_audit: tuple[Path, Path]) -> None:
    data, out = compas_audit
    leak = json.loads((out / "leakage.json").read_text())
    release = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    sizes = release.groupby(COMPAS_OBSERVED).size()
    rel = leak["classic"]["release"]
    assert rel["table"]["k_anonymity"]["value"] == sizes.min()
    assert rel["n_classes"] == len(sizes) and rel["n_records"] == 5278
    assert rel["table"]["sample_uniques"]["value"] == int((sizes == 1).sum())
    inp = pd.read_csv(data).groupby(COMPAS_OBSERVED).size()
    assert leak["classic"]["input"]["table"]["k_anonymity"]["value"] == inp.min()
    assert leak["classic"]["input"]["n_classes"] == len(inp)
    for entry in rel["table"].values():
        assert {"threshold", "passes", "reference"} <= set(entry)


def test_attack_accounts_for_every_record_and_bayes_is_exact(
    compas_audit: tuple[Path, Path],
) -> None:
    data, out = compas_audit
    leak = json.loads((out / "leakage.json").read_text())
    attack = leak["attack"]
    assert attack["n_targets"] + attack["n_control"] == 5278
    race = leak["attack"]["attributes"]["race"]
    lo, hi = race["risk_ci"]
    assert 0 <= lo <= race["risk"] <= hi <= 1
    release = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    cell = release[COMPAS_OBSERVED].agg("|".join, axis=1)
    sensitive = pd.read_csv(data)["race"]
    table = pd.crosstab(sensitive, cell.to_numpy())
    assert race["bayes_success"] == pytest.approx(table.max(axis=0).sum() / 5278, abs=1e-12)
    prior = sensitive.value_counts(normalize=True).max()
    assert race["prior_success"] == pytest.approx(prior)
    # lift privacy caps the Bayes attacker's gain: success <= prior * e^epsilon
    assert race["bayes_success"] <= prior * np.exp(leak["epsilon"]) + 1e-12


def test_report_accounts_for_every_record_in_plain_words(compas_audit: tuple[Path, Path]) -> None:
    _, out = compas_audit
    html = (out / "report.html").read_text()
    scores = pd.read_csv(out / "scores.csv")
    n_inf = int(np.isinf(scores["risk"]).sum())
    assert f"All 5,278 of 5,278 records are drawn: {5278 - n_inf:,} with a finite risk, " in html
    assert f"{n_inf:,} with an infinite risk" in html
    n_flagged = int(scores["flagged"].sum())
    assert f"{n_flagged:,} of 5,278 records are flagged" in html
    for section in ("findings", "classic", "attack", "warnings", "glossary", "settings"):
        assert f'id="{section}"' in html
    assert len(re.findall(r'<abbr title="[^"]{10,}">', html)) >= 30
    # no internal names, Python reprs or float noise
    for bad in ("sibson_mi", "lift_epsilon", r"np\.float", r"\{'", "None</td>", r"\de-\d"):
        assert not re.search(bad, html), bad
    assert "Sibson mutual information (alpha = 2)" in html
    assert hashlib.sha256((out.parent / "compas.csv").read_bytes()).hexdigest() in html
    # warnings raised during the run are in the report and in leakage.json (a run that
    # certainly warns: test_report_holds_no_record_values_unless_asked)
    leak = json.loads((out / "leakage.json").read_text())
    assert all(escape(to_flags(w["message"])) in html for w in leak["warnings"])
    not_met = [w for w in leak["warnings"] if w["category"] == "ReleaseNotMetWarning"]
    assert bool(not_met) == (leak["status"] == "not_met")


def test_report_tells_the_verdict_of_leakage_json(compas_audit: tuple[Path, Path]) -> None:
    _, out = compas_audit
    html = (out / "report.html").read_text()
    leak = json.loads((out / "leakage.json").read_text())
    met = leak["status"] == "met"
    assert ("MET: the release meets" in html) == met
    assert ("NOT MET: the release does not meet" in html) == (not met)
    for reason in leak["reasons"]:
        assert f"Why: {escape(to_flags(reason))}." in html  # a CLI run: the report speaks flags
    # the held-out sentence says "within the tolerance" exactly when the held-out check passes
    # (the upper end of its interval at most the tolerance: docs/release.md, "The verdict")
    within = "within the tolerance</span>" in html
    assert within != ("above the tolerance</span>" in html)
    assert within == (leak["held_out"]["verdict"] == "met")
    # next steps: publish when met; else up to three feasible alternatives, or one fallback
    steps = re.search(r'<ol id="next-steps">(.*?)</ol>', html, re.S)
    assert steps is not None
    items = re.findall(r"<li>(.*?)</li>", steps.group(1), re.S)
    feasible = [a for a in leak["alternatives"] if a["feasible"]]
    if met:
        assert len(items) == 1 and items[0].startswith("Publish release.csv")
    else:
        assert len(items) == max(1, min(3, len(feasible)))
        for item, alt in zip(items, feasible, strict=False):
            assert escape(alt["description"]) in item
    # the per-value table: one row per value, protected as in leakage.json
    table = re.search(r'<table id="per-value">(.*?)</table>', html, re.S)
    assert table is not None
    rows = re.findall(
        r"<tr><td>(.*?)</td><td>(.*?)</td>.*?<td class=\"(pass|fail)\">", table.group(1)
    )
    expected = [
        (r["attribute"], r["value"], "pass" if r["protected"] else "fail")
        for r in leak["guarantee"]["per_value"]
    ]
    assert rows == expected
    assert escape(leak["guarantee_in_words"]) in html
    unique = leak["release"]["unique_records"]
    assert f'k = 1)</th><td class="num">{unique:,} of 5,278</td>' in html


def test_a_met_release_beside_failing_checks_is_explained_once(
    compas_audit: tuple[Path, Path],
) -> None:
    _, out = compas_audit
    html = (out / "report.html").read_text()
    stdout = (out.parent / "stdout.txt").read_text()
    leak = json.loads((out / "leakage.json").read_text())
    release = leak["classic"]["release"]
    fails = [k for k, v in release["table"].items() if not v["passes"]]
    for block in release["sensitive"].values():
        fails += [k for k, v in block["measures"].items() if not v["passes"]]
    fails += [k for k, v in leak["attack"]["attributes"].items() if not v["passes"]]
    note = re.search(r'<p id="checks-note"><strong>Note.</strong> (.*?)</p>', html, re.S)
    explained = leak["status"] == "met" and bool(fails)
    assert (note is not None) == explained
    assert ("The release is met, yet" in stdout) == explained
    if note is not None:
        # named as the classic table names them, not by their keys in leakage.json
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", note.group(1)), note.group(1)


def test_report_holds_no_record_values_unless_asked(
    compas_audit: tuple[Path, Path], tmp_path: Path
) -> None:
    _, out = compas_audit
    html = (out / "report.html").read_text()
    flagged = re.search(r'<section id="flagged">(.*?)</section>', html, re.S)
    assert flagged is not None
    assert "<table" not in flagged.group(1) and "are not listed here" in flagged.group(1)
    assert 'id="record-level"' not in html and "Contains record-level data" not in html
    # asked for: the riskiest flagged records with their own observed values, and the report
    # marked as holding record-level data (40 values of x in 100 records: a sparse table, which
    # certainly warns)
    data = tmp_path / "d.csv"
    rng = np.random.default_rng(3)
    s = rng.integers(0, 2, 100)
    frame = pd.DataFrame(
        {
            "s": np.where(s == 1, "a", "b"),
            "x": [f"v{i}" for i in rng.integers(0, 40, 100)],
            "y": np.where(rng.random(100) < 0.2 + 0.6 * s, "u", "w"),
        }
    )
    frame.to_csv(data, index=False)
    res = runner.invoke(
        app,
        ["audit", str(data), "--sensitive", "s", "--epsilon", "0.2", "--report-records",
         "--no-checks", "--out", str(tmp_path / "o")],
    )  # fmt: skip
    assert res.exit_code in (0, 3), res.output
    html = (tmp_path / "o" / "report.html").read_text()
    assert 'id="record-level"' in html and "Contains record-level data" in html
    leak = json.loads((tmp_path / "o" / "leakage.json").read_text())
    assert_verdict_consistent(leak, res.exit_code)
    assert any("fewer than 5 samples" in w["message"] for w in leak["warnings"])
    assert all(escape(to_flags(w["message"])) in html for w in leak["warnings"])
    scores = pd.read_csv(tmp_path / "o" / "scores.csv")
    n_flagged = int(scores["flagged"].sum())
    assert n_flagged > 0
    section = re.search(r'<section id="flagged">(.*?)</section>', html, re.S)
    assert section is not None
    listed = re.findall(
        r'<tr><td class="num">([\d,]+)</td><td class="num">[^<]*</td><td>([^<]*)</td>'
        r"<td>([^<]*)</td></tr>",
        section.group(1),
    )
    assert len(listed) == min(25, n_flagged)
    for record, x, y in listed:
        row = int(record.replace(",", ""))
        assert scores.loc[row, "flagged"]
        assert (x, y) == (frame.loc[row, "x"], frame.loc[row, "y"])
    shown = {int(r.replace(",", "")) for r, *_ in listed}
    risk = scores["risk"]
    hidden = scores["flagged"] & ~scores.index.isin(shown)
    assert not hidden.any() or risk[hidden].max() <= risk[list(shown)].min()


def test_version_option() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"privwatch {privwatch_version()}"
