"""The release-method seam of the audit (issue #40, item 3; docs/architecture.md, "Release
methods"): one registry, one rule that picks a method, each method's mechanism saved or
refused as documented, and a method registered in a test that runs through the route, the
printer and the report without any of them being edited."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import privwatch as pw
from privwatch.audit import (
    METHODS,
    Audit,
    AuditSpec,
    AuditView,
    Decision,
    Measured,
    ReleaseMethod,
    choose_method,
    method_for,
    search_rows,
    stable_leakage,
)
from privwatch.audit import _registry as registry
from privwatch.audit._method import check_route
from privwatch.cli import app
from privwatch.exceptions import ValidationError
from privwatch.release import Generalisation
from privwatch.report import SCHEMA, write_audit
from privwatch.watchdog import LearnedWatchdogMechanism

runner = CliRunner()


def _records(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.choice(["a", "b"], size=n)
    x = np.where(rng.random(n) < 0.7, s, rng.choice(["a", "b"], size=n))
    return pd.DataFrame({"s": s, "x": [f"x{v}" for v in x], "y": rng.choice(["p", "q"], n)})


# -- the registry and the rule ------------------------------------------------------------


def test_the_registry_lists_the_methods_by_their_names() -> None:
    assert list(METHODS) == ["search", "relaxed", "watchdog", "randomized", "auto"]
    for name, method in METHODS.items():
        assert isinstance(method, ReleaseMethod)
        assert method.name == name and method.title and method.routes
        assert set(method.routes) <= set(pw.audit.ROUTES)
    assert METHODS["search"].routes == ("memory", "engine")
    assert METHODS["relaxed"].routes == ("memory",)
    assert METHODS["watchdog"].routes == ("memory", "stream")
    assert METHODS["randomized"].routes == ("memory",)


def test_one_rule_picks_the_method_from_the_spec() -> None:
    assert choose_method(AuditSpec(epsilon=1.0)) == "search"
    assert choose_method(AuditSpec(epsilon=1.0, delta=0.05)) == "relaxed"
    assert choose_method(AuditSpec(epsilon=1.0, estimator="classifier")) == "watchdog"
    assert method_for(AuditSpec(epsilon=1.0, delta=0.05)) is METHODS["relaxed"]


@pytest.mark.parametrize(
    ("options", "method"),
    [
        ({}, "search"),
        ({"delta": 0.05}, "relaxed"),
        ({"estimator": "quadratic_logistic"}, "watchdog"),  # learned, and fast
    ],
)
def test_each_audit_keeps_the_method_that_decided(options: dict[str, Any], method: str) -> None:
    result = pw.audit.run(source=_records(), sensitive="s", epsilon=0.5, folds=0, checks=False,
                          **options)  # fmt: skip
    assert result.method == method and result.release_method is METHODS[method]
    assert result.rows() == METHODS[method].rows(result)
    labels = [label for label, _ in result.rows()]
    assert labels[0] == "records"
    assert ("release" in labels) == (method == "search")
    assert ("flagged records" in labels) == (method == "watchdog")
    assert ("records merged into '*'" in labels) == (method == "relaxed")
    if method == "watchdog":  # a learned log-lift: its scorer, saved (#41 item 4)
        assert isinstance(result.mechanism(), LearnedWatchdogMechanism)
    if method == "relaxed":  # plug-in tuples kept or merged: a map of tuples, saved (#41)
        assert isinstance(result.mechanism(), Generalisation)


def test_a_method_is_refused_on_a_route_it_does_not_run_on() -> None:
    check_route(METHODS["search"], "engine")
    with pytest.raises(ValidationError, match="'relaxed'.*runs on the memory route"):
        check_route(METHODS["relaxed"], "engine")


# -- each method's mechanism --------------------------------------------------------------


def test_the_search_saves_its_generalisation(tmp_path: Path) -> None:
    df = _records()
    result = pw.audit.run(source=df, sensitive="s", epsilon=0.5, folds=0, checks=False)
    mechanism = result.mechanism()
    assert isinstance(mechanism, Generalisation)
    assert result.generalisation().to_state() == mechanism.to_state()  # the search's own name
    path = mechanism.save(tmp_path / "m.json")
    applied = Generalisation.load(path).apply(df)
    released = result.release
    assert released is not None
    assert (applied.released[["x", "y"]].to_numpy() == released.to_numpy().astype(str)).all()


def test_a_searched_release_not_in_memory_or_made_elsewhere_has_no_mechanism() -> None:
    result = pw.audit.run(source=_records(), sensitive="s", epsilon=0.5, folds=0, checks=False)
    result.data = None  # as on the engine route: the count table, not the records
    with pytest.raises(ValidationError, match="searched release of records in memory"):
        result.mechanism()
    result.release_method = None  # a release judged by privwatch check
    with pytest.raises(ValidationError, match="searched release of records in memory"):
        result.mechanism()
    assert result.rows() == [] and result.report_rows() == []


def test_search_rows_are_the_searched_release_figures() -> None:
    result = pw.audit.run(source=_records(), sensitive="s", epsilon=0.5, folds=0, checks=False)
    assert result.found is not None
    assert result.rows() == search_rows(result.found, int(result.summary["n_records"]))


# -- a method registered in a test runs through the route, the printer and the report -----


class SuppressMethod(ReleaseMethod):
    """The worked example of docs/architecture.md: every record suppressed."""

    name: ClassVar[str] = "suppress"
    title: ClassVar[str] = "everything suppressed"
    routes: ClassVar[tuple[str, ...]] = ("memory",)

    def decide(self, spec: AuditSpec, measured: Measured, step: Any) -> Decision:
        records = measured.records
        assert records is not None
        flags = np.ones(len(records), dtype=bool)
        release = pd.DataFrame("*", index=records.index, columns=measured.observed)
        scores = pd.DataFrame({"risk": np.zeros(len(records)), "flagged": flags},
                              index=records.index)  # fmt: skip
        return Decision(self.name, measured.epsilon, measured.epsilon_reason, flags=flags,
                        risk=scores["risk"].to_numpy(), release=release, scores=scores,
                        guarantee={"effective_epsilon": 0.0})  # fmt: skip

    def leakage(self, spec: AuditSpec, measured: Measured, decision: Decision) -> dict[str, Any]:
        return stable_leakage({"status": "met", "guarantee": decision.guarantee,
                               "guarantee_in_words": "Nothing is released.", "before": {}},
                              {"flagged_probability": 1.0})  # fmt: skip

    def rows(self, result: AuditView) -> list[tuple[str, str]]:
        return [("records suppressed by the toy", f"{result.summary['n_flagged']:,}")]


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> ReleaseMethod:
    method = SuppressMethod()
    monkeypatch.setitem(METHODS, method.name, method)
    monkeypatch.setattr(registry, "choose_method", lambda spec, route=None: method.name)
    return method


def test_a_registered_method_runs_through_the_route_and_the_writer(
    toy: ReleaseMethod, tmp_path: Path
) -> None:
    df = _records()
    result = pw.audit.run(source=df, sensitive="s", epsilon=0.5, folds=0)
    assert isinstance(result, Audit) and result.method == "suppress"
    assert result.satisfied and result.summary["n_flagged"] == len(df)
    assert result.release is not None and (result.release.to_numpy() == "*").all()
    assert result.leakage["classic"] is not None and result.leakage["attack"] is None
    write_audit(result, tmp_path / "out")
    doc = json.loads((tmp_path / "out" / "leakage.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["status"] == "met" and doc["guarantee"] == {"effective_epsilon": 0.0}
    html = (tmp_path / "out" / "report.html").read_text()
    assert "The release: everything suppressed" in html
    assert f'records suppressed by the toy</th><td class="num">{len(df)}' in html
    with pytest.raises(ValidationError, match="searched release"):
        result.mechanism()


def test_a_registered_method_is_printed_by_the_command_line(
    toy: ReleaseMethod, tmp_path: Path
) -> None:
    path = tmp_path / "data.csv"
    _records().to_csv(path, index=False)
    res = runner.invoke(app, ["audit", str(path), "--sensitive", "s", "--epsilon", "0.5",
                              "--folds", "0", "--out", str(tmp_path / "out")])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "MET: the release meets the requested guarantee." in res.output
    assert "Nothing is released." in res.output
    assert "records suppressed by the toy" in res.output and "200" in res.output
    assert "report.html" in res.output
