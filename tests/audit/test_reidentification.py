"""Re-identification risk through the audit (issue #44): options, leakage.json, scores, report."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privwatch.audit import AuditSpec, run
from privwatch.cli import app
from privwatch.exceptions import ValidationError
from privwatch.report import SCHEMA, write_audit


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "s": rng.choice(["a", "b"], n),
            "x": rng.choice(["p", "q", "r"], n, p=[0.6, 0.3, 0.1]),
            "y": rng.choice(list("ABCDEFGHIJ"), n),
        }
    )
    frame["w"] = rng.uniform(5, 20, n).round(1)
    frame["house"] = np.arange(n) // 2
    return frame


def _audit(frame: pd.DataFrame, **options: object):  # type: ignore[no-untyped-def]
    return run(source=frame, sensitive="s", epsilon=2.0, folds=0, **options)


def test_block_and_scores_by_hand_with_weights_and_households(tmp_path: Path) -> None:
    frame = _table()
    result = _audit(frame, weights="w", cluster_id="house", risk_threshold=0.2)
    assert result.settings["observed"] == ["x", "y"]  # design columns are not quasi-identifiers
    block = result.leakage["reidentification"]
    assert block["threshold"] == 0.2
    inp = block["input"]
    sizes = frame.groupby(["x", "y"]).size()
    weights = frame.groupby(["x", "y"])["w"].sum()
    assert inp["prosecutor_max"] == pytest.approx(1 / sizes.min())
    assert inp["prosecutor_mean"] == pytest.approx(len(sizes) / len(frame))
    assert inp["journalist_max"] == pytest.approx(float((1 / weights).max()))
    assert inp["population_source"] == "weights"
    assert inp["household_risk_max"] is not None
    scores = result.scores
    released = result.release[["x", "y"]].astype(str).agg("|".join, axis=1)
    np.testing.assert_allclose(
        scores["reid_prosecutor"], 1 / released.map(released.value_counts()).to_numpy()
    )
    above = int((scores["reid_marketer"] > 0.2).sum())
    assert block["release"]["records_above_threshold"] == above
    assert block["release"]["global_risk"] == pytest.approx(float(scores["reid_marketer"].sum()))
    written = write_audit(result, tmp_path / "out")
    leakage = json.loads((tmp_path / "out" / "leakage.json").read_text())
    jsonschema.validate(leakage, SCHEMA)
    header = (tmp_path / "out" / "scores.csv").read_text().splitlines()[0]
    for column in ("reid_prosecutor", "reid_journalist", "reid_marketer"):
        assert column in header
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Re-identification risk" in html and "counted here, never listed" in html
    assert len(written) >= 5


def test_population_table_gives_journalist_risk_and_k_map(tmp_path: Path) -> None:
    frame = _table()
    counts = frame.groupby(["x", "y"]).size().rename("count").reset_index()
    counts["count"] *= 10  # a population ten times the records, class by class
    counts = pd.concat([counts, pd.DataFrame({"x": ["zz"], "y": ["Q"], "count": [1]})])
    path = tmp_path / "population.csv"
    counts.to_csv(path, index=False)
    result = _audit(frame.drop(columns=["w", "house"]), population=str(path))
    inp = result.leakage["reidentification"]["input"]
    sizes = frame.groupby(["x", "y"]).size()
    assert inp["population_source"] == "population table"
    assert inp["journalist_max"] == pytest.approx(1 / (10 * sizes.min()))
    assert inp["k_map"] == 10 * sizes.min()
    assert inp["marketer"] == pytest.approx(0.1 * len(sizes) / len(frame))  # sum f/F over n
    assert inp["population_uniques"]["estimate"] == 1.0  # the one class of one in the table


def test_sampling_fraction_and_no_population_information() -> None:
    frame = _table().drop(columns=["w", "house"])
    plain = _audit(frame).leakage["reidentification"]["input"]
    assert plain["population_source"] == "none"
    assert plain["marketer"] == pytest.approx(plain["prosecutor_mean"])  # sample = population
    sampled = _audit(frame, sampling_fraction=0.1).leakage["reidentification"]["input"]
    assert sampled["population_source"] == "sampling fraction"
    assert sampled["journalist_max"] == pytest.approx(0.1 * plain["prosecutor_max"])
    assert sampled["marketer"] < plain["marketer"]


@pytest.mark.parametrize(
    "options",
    [
        {"sampling_fraction": 0.0},
        {"sampling_fraction": 1.5},
        {"sampling_fraction": 0.1, "weights": "w"},
        {"risk_threshold": 2.0},
    ],
)
def test_spec_refuses_bad_options(options: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        AuditSpec(sensitive=("s",), **options)  # type: ignore[arg-type]


def test_command_line_options_reach_leakage_json(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    _table().to_csv(data, index=False)
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app,
        [
            "audit", str(data), "--sensitive", "s", "--epsilon", "2", "--folds", "0",
            "--weights", "w", "--cluster-id", "house", "--risk-threshold", "0.15",
            "--out", str(out), "-q",
        ],
    )  # fmt: skip
    assert res.exit_code in (0, 3), res.output
    block = json.loads((out / "leakage.json").read_text())["reidentification"]
    assert block["threshold"] == 0.15
    assert block["input"]["population_source"] == "weights"
    assert block["input"]["household_risk_max"] is not None


def test_check_computes_it_for_a_release_made_elsewhere(tmp_path: Path) -> None:
    from privwatch.check import check

    frame = _table().drop(columns=["house"])
    released = frame[["x", "y"]].copy()
    released["y"] = np.where(released["y"].isin(list("ABCDE")), "A-E", "F-J")
    result = check(frame, released, sensitive="s", weights="w", epsilon=2.0, folds=0)
    block = result.leakage["reidentification"]
    sizes = released.groupby(["x", "y"]).size()
    assert block["release"]["prosecutor_max"] == pytest.approx(1 / sizes.min())
    assert block["release"]["population_source"] == "weights"
    assert "reid_marketer" in result.scores.columns
    write_audit(result, tmp_path / "out")
    jsonschema.validate(json.loads((tmp_path / "out" / "leakage.json").read_text()), SCHEMA)


def test_check_of_the_audits_release_gives_the_audits_figures(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    _table().drop(columns=["w", "house"]).to_csv(data, index=False)
    flags = ["--sensitive", "s", "--epsilon", "2", "--folds", "0", "--sampling-fraction", "0.2",
             "-q"]  # fmt: skip
    runner = CliRunner()
    audit = runner.invoke(app, ["audit", str(data), *flags, "--out", str(tmp_path / "a")])
    assert audit.exit_code in (0, 3), audit.output
    release = tmp_path / "a" / "release.csv"
    check = runner.invoke(app, ["check", str(data), str(release), *flags, "--key", "record",
                                "--out", str(tmp_path / "c")])  # fmt: skip
    assert check.exit_code in (0, 3), check.output
    a = json.loads((tmp_path / "a" / "leakage.json").read_text())["reidentification"]
    c = json.loads((tmp_path / "c" / "leakage.json").read_text())["reidentification"]
    assert c["input"] == a["input"]
    for key in ("prosecutor_max", "prosecutor_mean", "journalist_max", "records_above_threshold"):
        assert c["release"][key] == pytest.approx(a["release"][key]), key


@pytest.mark.parametrize("options", [{}, {"sampling_fraction": 0.2}, {"population": True}])
def test_engine_route_gives_the_memory_routes_block_from_the_counts(
    tmp_path: Path, options: dict[str, object]
) -> None:
    from privwatch.datasets import COMPAS_OBSERVED, load_compas

    frame = load_compas()
    obs = ["sex", "age", "priors_count"]
    path = tmp_path / "compas.parquet"
    frame[["two_year_recid", *COMPAS_OBSERVED]].to_parquet(path)
    if options.get("population"):
        pop = frame.groupby(obs).size().rename("count").reset_index()
        pop["count"] = pop["count"] * 3 + (np.arange(len(pop)) % 2)  # some classes unique
        pop.loc[pop.index[:5], "count"] = 1
        pop.to_csv(tmp_path / "pop.csv", index=False)
        options = {"population": str(tmp_path / "pop.csv")}
    # max_levels: no automatic binning in memory (the engine route bins nothing)
    common = {"sensitive": "two_year_recid", "observed": obs, "epsilon": 1.0, "folds": 0}
    common["max_levels"] = 100
    memory = run(source=str(path), engine="pandas", **common, **options)
    engine = run(source=str(path), engine="duckdb", **common, **options)
    assert memory.route == "memory" and engine.route == "engine"
    a, b = memory.leakage["reidentification"], engine.leakage["reidentification"]
    assert a is not None and b is not None
    for part in ("release", "input"):
        for key, value in a[part].items():
            if key == "population_uniques":
                assert b[part][key]["estimate"] == pytest.approx(value["estimate"])
                assert b[part][key]["estimator"] == value["estimator"]
            else:
                assert b[part][key] == pytest.approx(value), (part, key)
    assert a["input"]["n_classes"] > a["release"]["n_classes"]  # the release merged classes


@pytest.mark.parametrize("option", [{"weights": "priors_count"}, {"cluster_id": "sex"}])
def test_engine_route_refuses_what_needs_the_records(
    tmp_path: Path, option: dict[str, object]
) -> None:
    from privwatch.datasets import load_compas

    path = tmp_path / "compas.parquet"
    load_compas().to_parquet(path)
    with pytest.raises(ValidationError, match="records in memory"):
        run(
            source=str(path), engine="duckdb", sensitive="two_year_recid",
            observed=["sex", "age"], epsilon=1.0, folds=0, **option,
        )  # fmt: skip


def test_streamed_route_refuses_the_reidentification_options(tmp_path: Path) -> None:
    from privwatch.audit import plan

    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(2):
        _table(50, seed=i).to_parquet(folder / f"{i}.parquet")
    glob = str(folder / "*.parquet")
    base = {"sensitive": "s", "observed": ["x", "y"], "epsilon": 1.0, "folds": 2}
    assert plan(AuditSpec(**base, estimator="classifier"), glob).name == "stream"
    with pytest.raises(ValidationError, match="sampling_fraction.*counts none"):
        plan(AuditSpec(**base, estimator="classifier", sampling_fraction=0.1), glob)
