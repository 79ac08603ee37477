"""Re-identification constraints on the release (issue #44 item 4): ``max_reid_risk`` and
``max_population_uniques`` enforced by the search and checked on the release."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from privwatch.audit import AuditSpec, run
from privwatch.audit._reid_constraint import constraint_verdict, search_floor
from privwatch.cli import app
from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.exceptions import ValidationError
from privwatch.report import SCHEMA, write_audit


def _compas(**options: object):  # type: ignore[no-untyped-def]
    settings: dict[str, object] = {"epsilon": 1.0, "folds": 0, "checks": False, **options}
    return run(
        source=load_compas(), sensitive="two_year_recid", observed=list(COMPAS_OBSERVED),
        bins=dict(COMPAS_BINS), **settings,
    )  # fmt: skip


def _smallest_class(result) -> int:  # type: ignore[no-untyped-def]
    cols = list(result.settings["observed"])
    return int(result.release[cols].astype(str).value_counts().min())


def test_floor_is_the_exact_class_size_of_each_model() -> None:
    base = {"sensitive": "s"}
    assert search_floor(AuditSpec(**base, max_reid_risk=0.09)) == 12  # ceil(11.1)
    assert search_floor(AuditSpec(**base, max_reid_risk=0.1)) == 10  # 1/0.1 exactly
    assert search_floor(AuditSpec(**base, max_reid_risk=0.09, sampling_fraction=0.1)) == 2
    assert search_floor(AuditSpec(**base, max_reid_risk=0.5, min_class_size=5)) == 5
    assert search_floor(AuditSpec(**base, max_reid_risk=0.09, weights="w")) == 1


@pytest.mark.parametrize(
    "options", [{"max_reid_risk": 0}, {"max_reid_risk": 1.5}, {"max_population_uniques": -1}]
)
def test_spec_refuses_bad_constraints(options: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        AuditSpec(sensitive="s", **options)  # type: ignore[arg-type]


def test_release_that_satisfies_r_on_compas_has_no_class_below_one_over_r() -> None:
    risk = 0.05
    result = _compas(max_reid_risk=risk)
    plain = _compas()
    assert _smallest_class(plain) < 1 / risk  # the constraint changes the release
    assert result.satisfied, result.reasons
    assert _smallest_class(result) >= math.ceil(1 / risk)
    block = result.leakage["reidentification"]["constraint"]
    assert block["model"] == "none"
    assert block["max_reid_risk"]["holds"] is True
    assert block["max_reid_risk"]["achieved"] == pytest.approx(1 / _smallest_class(result))
    assert result.settings["max_reid_risk"] == risk


def test_sampling_fraction_scales_the_class_size() -> None:
    result = _compas(max_reid_risk=0.05, sampling_fraction=0.5)
    assert result.satisfied, result.reasons
    smallest = _smallest_class(result)
    assert smallest / 0.5 >= 1 / 0.05
    assert result.leakage["reidentification"]["constraint"]["model"] == "sampling fraction"


def test_infeasible_r_is_not_met_with_reason_and_alternative(tmp_path: Path) -> None:
    result = _compas(max_reid_risk=1 / (2 * len(load_compas())))
    assert not result.satisfied
    assert any("max_reid_risk" in reason for reason in result.reasons)
    block = result.leakage["reidentification"]["constraint"]["max_reid_risk"]
    assert block["holds"] is False
    alternative = [a for a in result.alternatives if a.get("changed") == "max_reid_risk"]
    # the nearest feasible: a larger R at which the search keeps information
    assert alternative and alternative[0]["args"]["max_reid_risk"] > block["requested"]
    assert alternative[0]["information_nats"] > 0
    again = _compas(max_reid_risk=alternative[0]["args"]["max_reid_risk"])
    assert again.leakage["reidentification"]["constraint"]["max_reid_risk"]["holds"]
    assert again.found.information_nats > 0
    written = write_audit(result, tmp_path / "out")
    leakage = json.loads((tmp_path / "out" / "leakage.json").read_text(encoding="utf-8"))
    jsonschema.validate(leakage, SCHEMA)
    assert written


def test_population_uniques_limit_is_reached_by_raising_the_class_size() -> None:
    # one-sided lift privacy keeps sample uniques of the value they do not reveal, where
    # 1 / p(s = 0) = 1.89 < e^0.7 (two-sided breaks them); p(s = 1) e^0.7 < 1 stays protected
    loose = {"sampling_fraction": 0.1, "epsilon": 0.7, "disclosure": "positive"}
    # a limit that always holds: the release as without it, with its figures
    plain = _compas(**loose, max_population_uniques=1e9)
    assert plain.leakage["reidentification"]["release"]["population_uniques"]["estimate"] > 0
    result = _compas(**loose, max_population_uniques=0)
    block = result.leakage["reidentification"]
    assert block["input"]["population_uniques"]["estimate"] > 0
    assert block["constraint"]["max_population_uniques"]["holds"] is True
    assert block["release"]["population_uniques"]["estimate"] == 0
    assert result.satisfied, result.reasons
    assert _smallest_class(result) >= 2


def test_population_uniques_that_cannot_hold_make_the_audit_not_met() -> None:
    leakage = {"status": "met", "reasons": [], "alternatives": [], "utility": {}}
    block = {
        "model": "sampling fraction",
        "max_population_uniques": {"requested": 3.0, "achieved": 41.2, "holds": False},
    }
    found = _compas()
    constraint_verdict(block, leakage, found.found)
    assert leakage["status"] == "not_met"
    assert "max_population_uniques" in leakage["reasons"][0]
    assert leakage["alternatives"][0]["args"] == {"max_population_uniques": 41.2}
    assert leakage["alternatives"][0]["information_nats"] == found.found.information_nats


def test_command_line_infeasible_r_exits_3(tmp_path: Path) -> None:
    path = tmp_path / "compas.csv"
    load_compas().to_csv(path, index=False)
    bins = [f"--bins={k}={v if isinstance(v, int) else ','.join(map(str, v))}"
            for k, v in COMPAS_BINS.items()]  # fmt: skip
    args = ["audit", str(path), "--sensitive", "two_year_recid",
            "--observed", ",".join(COMPAS_OBSERVED), *bins, "--epsilon", "1", "--folds", "0",
            "--no-checks", "--max-reid-risk", "1e-6", "--out", str(tmp_path / "o")]  # fmt: skip
    outcome = CliRunner().invoke(app, args)
    assert outcome.exit_code == 3, outcome.output
    leakage = json.loads((tmp_path / "o" / "leakage.json").read_text(encoding="utf-8"))
    assert leakage["settings"]["max_reid_risk"] == 1e-6
    assert leakage["reidentification"]["constraint"]["max_reid_risk"]["holds"] is False
    assert any("max-reid-risk" in r or "max_reid_risk" in r for r in leakage["reasons"])
