"""One audit: one spec (:class:`~privwatch.audit.AuditSpec`), one plan
(:func:`~privwatch.audit.plan`), one result (:class:`~privwatch.audit.Audit`) on every route.

What is tested: the in-memory route (a DataFrame), the engine route (a Parquet file counted in
DuckDB and in Polars) and the streamed route (a learned estimator on Parquet batches) each return
an ``Audit`` whose ``leakage.json`` validates against the one schema and equals ``to_dict()``,
and each writes the common files through :func:`privwatch.report.write_audit`; the spec refuses
bad values naming the parameter, reads ``audit.toml`` and is frozen; ``plan`` picks the route
and refuses options that need the records in memory; the command line prints flags where the
library names parameters.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import privwatch
from privwatch.audit import (
    LEAKAGE_KEYS,
    RELEASE_FILE,
    SCORES_FILE,
    Audit,
    AuditSpec,
    Bundled,
    EngineRoute,
    MemoryRoute,
    StreamRoute,
    plan,
    run,
)
from privwatch.cli import app
from privwatch.cli._flags import flag, to_flags
from privwatch.exceptions import ValidationError
from privwatch.report import COMMON_FILES, RECORD_FILES, SCHEMA, write_audit

#: (route, engine) of each audit below.
ROUTES = {
    "memory": ("memory", "pandas"),
    "engine-duckdb": ("engine", "duckdb"),
    "engine-polars": ("engine", "polars"),
    "stream": ("stream", "stream"),
}


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A binary sensitive ``s``, two categorical observed columns and a numeric ``x``."""
    g = np.random.default_rng(seed)
    s = g.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.where(s == 1, "yes", "no"),
            "a": np.where(g.random(n) < 0.3 + 0.4 * s, "hi", "lo"),
            "b": g.integers(0, 3, n).astype(str),
            "x": 0.5 * s + g.normal(0, 1, n),
        }
    )


def _audit(route: str, base: Path) -> Audit:
    """One audit of :func:`_table` on ``route``, records written under ``base / "out"``."""
    df = _table()
    out = base / "out"
    out.mkdir()
    common: dict[str, Any] = {"sensitive": "s", "epsilon": 0.5, "folds": 2}
    if route == "memory":
        return run(source=df, observed=["a", "b"], out=out, **common)
    if route == "stream":  # a glob of Parquet files (one small file is read into memory)
        df.iloc[:200].to_parquet(base / "part-0.parquet", row_group_size=100)
        df.iloc[200:].to_parquet(base / "part-1.parquet", row_group_size=100)
        return run(
            source=str(base / "part-*.parquet"), observed=["x", "a"], estimator="classifier",
            out=out, estimator_params={"epochs": 2, "n_ensemble": 1}, **common,
        )  # fmt: skip
    engine = route.split("-")[1]
    pytest.importorskip(engine)
    path = base / "t.parquet"
    df.to_parquet(path)
    return run(source=str(path), observed=["a", "b"], engine=engine, out=out, **common)


@pytest.fixture(scope="module", params=list(ROUTES))
def audited(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Audit, Path, list[Path]]:
    """(route, the audit, its output folder, the paths write_audit wrote)."""
    base = tmp_path_factory.mktemp(request.param)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _audit(request.param, base)
    out = base / "out"
    return request.param, result, out, write_audit(result, out)


# ------------------------------------------------------------------ one result on every route
def test_every_route_returns_the_one_audit(audited: tuple[str, Audit, Path, list[Path]]) -> None:
    route, result, _, _ = audited
    assert type(result) is Audit
    assert (result.route, result.engine) == ROUTES[route]
    assert result.route_reason and tuple(result.leakage) == LEAKAGE_KEYS
    assert result.summary["n_records"] == 400 and result.epsilon == 0.5
    assert result.satisfied == (result.leakage["status"] == "met")
    in_memory = route == "memory"
    assert (result.scores is not None) == (result.release is not None) == in_memory
    assert (result.watchdog is not None) == in_memory
    assert (result.found is not None) == (route != "stream")  # the release search
    assert (result.written is None) == in_memory


def test_every_route_leakage_json_validates_against_the_one_schema(
    audited: tuple[str, Audit, Path, list[Path]],
) -> None:
    route, result, out, _ = audited
    leak = json.loads((out / "leakage.json").read_text(encoding="utf-8"))
    jsonschema.validate(leak, SCHEMA)
    assert leak == result.to_dict()
    assert leak["route"] == ROUTES[route][0] and leak["engine"] == ROUTES[route][1]
    for key in ("stamp", "settings", "summary"):  # once missing on the engine route
        assert leak[key], key
    with pytest.raises(jsonschema.ValidationError):  # the schema is not vacuous
        jsonschema.validate({k: v for k, v in leak.items() if k != "summary"}, SCHEMA)


def test_every_route_writes_the_common_files(
    audited: tuple[str, Audit, Path, list[Path]],
) -> None:
    route, result, out, written = audited
    for name in COMMON_FILES:
        assert (out / name).stat().st_size > 0, name
    assert "data:image/png;base64," in (out / "report.html").read_text(encoding="utf-8")
    records = [out / RELEASE_FILE, out / SCORES_FILE]
    if route == "memory":
        assert {p.name for p in written} == {*COMMON_FILES, *RECORD_FILES}
        assert len(pd.read_csv(out / "release.csv")) == 400
        assert not any(p.exists() for p in records)
    else:
        assert result.written == [str(p) for p in records] and records[0] in written
        assert {p.name for p in written} == {*COMMON_FILES, RELEASE_FILE, SCORES_FILE}
        assert all(len(pd.read_parquet(p)) == 400 for p in records)
        assert not any((out / name).exists() for name in RECORD_FILES)


# ----------------------------------------------------------------------------------- the spec
@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"epsilon": -1}, "epsilon"),
        ({"folds": 1}, "folds"),
        ({"disclosure": "x"}, "disclosure"),
        ({"confidence": 1.5}, "confidence"),
        ({"max_suppressed": 2.0}, "max_suppressed"),
        ({"engine": "oracle"}, "engine"),
        ({"seed": -3}, "seed"),
    ],
)
def test_spec_refuses_bad_values_naming_the_parameter(options: dict[str, Any], name: str) -> None:
    pattern = f"`{name}`"
    with pytest.raises(ValidationError, match=pattern):
        AuditSpec(**options)
    with pytest.raises(ValidationError, match=pattern):
        AuditSpec.from_options(options)
    with pytest.raises(ValidationError, match=pattern):
        AuditSpec().replace(**options)
    with pytest.raises(ValidationError, match=pattern):  # before any record is read
        run(source=_table(), sensitive="s", **options)


def test_spec_refuses_an_unknown_option() -> None:
    with pytest.raises(ValidationError, match=r"unknown audit options \['epsilonn'\]"):
        AuditSpec.from_options({"epsilonn": 1.0})
    with pytest.raises(ValidationError, match="epsilonn"):
        run(source=_table(), sensitive="s", epsilonn=1.0)


def test_spec_reads_the_audit_table_of_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(
        '[audit]\nsensitive = "s"\nobserved = ["a", "b"]\nepsilon = 0.3\nmax-suppressed = 0.1\n'
        "folds = 3\nseed = 7\nbins = {x = 4}\nestimator_params = {epochs = 2}\n",
        encoding="utf-8",
    )
    spec = AuditSpec.from_toml(path, epsilon=0.25)
    assert spec.epsilon == 0.25  # the override wins
    assert (spec.sensitive, spec.observed) == (("s",), ("a", "b"))
    assert (spec.max_suppressed, spec.folds, spec.seed) == (0.1, 3, 7)
    assert spec.bins == {"x": 4} and spec.estimator_params == {"epochs": 2}
    assert spec.disclosure == "both" and spec.confidence is None  # defaults kept
    top = tmp_path / "top.toml"
    top.write_text('sensitive = "s,t"\nconfidence = 0.9\n', encoding="utf-8")
    assert AuditSpec.from_toml(top) == AuditSpec(sensitive=("s", "t"), confidence=0.9)
    bad = tmp_path / "bad.toml"
    bad.write_text("[audit]\nfolds = 1\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="`folds`"):
        AuditSpec.from_toml(bad)
    broken = tmp_path / "broken.toml"
    broken.write_text("epsilon = = 1\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="`config` must be a readable TOML file"):
        AuditSpec.from_toml(broken)


def test_spec_is_frozen_and_replace_makes_a_validated_copy() -> None:
    spec = AuditSpec(sensitive="s", epsilon=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.epsilon = 2.0  # type: ignore[misc]
    other = spec.replace(epsilon=1.0)
    assert (spec.epsilon, other.epsilon, other.sensitive) == (0.5, 1.0, ("s",))
    assert privwatch.AuditSpec is AuditSpec and privwatch.audit.run is run
    assert spec.search_options()["confidence"] is None
    assert AuditSpec(confidence=0.9).search_options()["confidence"] == 0.9


# ----------------------------------------------------------------------------------- the plan
def test_plan_picks_the_route_with_its_reason(tmp_path: Path) -> None:
    df = _table()
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    route = plan(AuditSpec(), Bundled("compas"))
    assert isinstance(route, MemoryRoute) and (route.name, route.engine) == ("memory", "pandas")
    assert "bundled data set compas" in route.reason
    assert isinstance(plan(AuditSpec(), df), MemoryRoute)
    assert isinstance(plan(AuditSpec(), str(path)), MemoryRoute)  # one small file: pandas
    route = plan(AuditSpec(engine="duckdb"), str(path))
    assert isinstance(route, EngineRoute) and (route.name, route.engine) == ("engine", "duckdb")
    learned = AuditSpec(estimator="classifier", epsilon=0.5)
    assert isinstance(plan(learned, str(path)), MemoryRoute)  # one small file, in memory
    route = plan(learned, str(tmp_path / "*.parquet"))
    assert isinstance(route, StreamRoute) and route.name == "stream"
    assert (
        "a glob of files" in route.reason and "reads the Parquet files in batches" in route.reason
    )


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"delta": 0.1}, "delta"),
        ({"weights": "x"}, "weights"),
        ({"estimator": "quadratic_logistic"}, "estimator"),
    ],
)
def test_plan_refuses_memory_only_options_on_the_engine_route(
    tmp_path: Path, options: dict[str, Any], name: str
) -> None:
    path = tmp_path / "t.parquet"
    _table().to_parquet(path)
    spec = AuditSpec(engine="duckdb", **options)
    with pytest.raises(ValidationError, match=f"`{name}` .*needs the records in memory"):
        plan(spec, str(path))
    assert isinstance(plan(spec.replace(engine="pandas"), str(path)), MemoryRoute)


# ------------------------------------------------------------------------------- the flags
@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("raise `max_suppressed`", "raise --max-suppressed"),
        ("try `disclosure`='positive' or", "try --disclosure positive or"),
        ('try `disclosure`="positive"', "try --disclosure positive"),
        ("with `epsilon`=0.5, or", "with --epsilon 0.5, or"),
        ("pass `local`=False", "pass --no-local"),
        ("pass `overwrite`=True to", "pass --overwrite to"),
        ("`seed` and `rng`", "--seed and --seed"),
        ("`hierarchies` of a column", "--hierarchy of a column"),
        ("give `source`", "give DATA"),
        ("`bins['z']` asks for", "`bins['z']` asks for"),  # an expression, not a parameter
        ("no parameter here", "no parameter here"),
    ],
)
def test_to_flags(message: str, expected: str) -> None:
    assert to_flags(message) == expected


def test_flag_of_a_parameter() -> None:
    assert flag("max_suppressed") == "--max-suppressed"
    assert flag("held_out_tolerance") == "--held-out-tolerance"
    assert flag("hierarchies") == "--hierarchy" and flag("seed") == "--seed"


# ------------------------------------------------------------------------- the command line
def test_cli_prints_flags_where_the_library_names_parameters(tmp_path: Path) -> None:
    out = tmp_path / "o"
    args = ["audit", "--dataset", "compas", "--epsilon", "1", "--no-checks", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code in (0, 3), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "`" not in res.output
    leak = json.loads((out / "leakage.json").read_text(encoding="utf-8"))
    assert (leak["route"], leak["epsilon"]) == ("memory", 1.0) and leak["attack"] is None
    assert res.exit_code == (0 if leak["status"] == "met" else 3)
    text = " ".join(res.output.split())
    # every library message with a backticked parameter is printed with its flag
    alternatives = [a["description"] if isinstance(a, dict) else a for a in leak["alternatives"]]
    library = [*leak["reasons"], *alternatives]
    named = [m for m in library if re.search(r"`[a-z_]+`", m)]
    for message in named:
        assert " ".join(to_flags(message).split()) in text, message
    if leak["status"] == "not_met":
        assert "NOT MET" in text and named and re.search(r" --[a-z]", text)
