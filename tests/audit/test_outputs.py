"""The outputs of an audit of COMPAS read from a CSV file: leakage.json against its schema, the
stamp, the classic measures and the attack wired in, every record accounted for, and plain words
in the report."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privwatch.audit import privwatch_version
from privwatch.cli import app
from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.preprocessing import bin_columns
from privwatch.report import SCHEMA

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
    assert res.exit_code == 3, res.output  # NOT MET on held-out records (see test_cli_audit)
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
    # warnings raised during the run are in the report and in leakage.json
    leak = json.loads((out / "leakage.json").read_text())
    assert leak["warnings"] and all(w["message"] in html for w in leak["warnings"])
    steps = re.search(r'<ol id="next-steps">(.*?)</ol>', html, re.S)
    assert steps is not None and steps.group(1).count("<li>") == 3


def test_version_option() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"privwatch {privwatch_version()}"
