"""`privwatch check` on the release `privwatch audit` published gives that audit's verdict and
figures (the audit's cells are fixed; its held-out folds were refitted, the check's cannot be)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privwatch.cli._app import app
from privwatch.datasets import load_compas

runner = CliRunner()


@pytest.mark.slow
def test_check_of_an_audit_release_gives_the_audits_verdict_and_figures(tmp_path: Path) -> None:
    df = load_compas()[["sex", "age_cat", "c_charge_degree", "decile_score", "race"]]
    data = tmp_path / "compas.csv"
    df.to_csv(data, index=False)
    flags = ["--sensitive", "race", "--epsilon", "1", "--quiet"]
    audit = runner.invoke(app, ["audit", str(data), *flags, "--out", str(tmp_path / "a")])
    assert audit.exit_code in (0, 3), audit.output
    release = tmp_path / "a" / "release.csv"
    check = runner.invoke(app, ["check", str(data), str(release), *flags, "--key", "record",
                                "--out", str(tmp_path / "c")])  # fmt: skip
    assert check.exit_code == audit.exit_code, check.output
    a = json.loads((tmp_path / "a" / "leakage.json").read_text())
    c = json.loads((tmp_path / "c" / "leakage.json").read_text())
    assert a["release"]["suppressed_records"] > 0  # a generalised release with suppression
    assert c["status"] == a["status"]
    for key in ("suppressed_records", "unique_records", "entropy_nats", "n_records"):
        assert c["release"][key] == a["release"][key], key
    for key in ("epsilon", "disclosure", "max_log_lift_in_sample", "per_value"):
        assert c["guarantee"][key] == a["guarantee"][key], key
    assert c["classic"]["release"] == a["classic"]["release"]
    assert c["held_out"]["verdict"] == a["held_out"]["verdict"]
    assert c["held_out"]["breach_probability"] == pytest.approx(
        a["held_out"]["breach_probability"], abs=0.005
    )
    for x, y in zip(c["held_out"]["breach_probability_ci"],
                    a["held_out"]["breach_probability_ci"], strict=True):  # fmt: skip
        assert x == pytest.approx(y, abs=0.005)
    for part in ("before", "after"):
        assert c[part].keys() == a[part].keys()
        for key, value in a[part].items():
            same = value if not isinstance(value, float) else pytest.approx(value, rel=1e-12)
            assert c[part][key] == same, (part, key)
    assert c["check"]["perturbed_records"] == 0
