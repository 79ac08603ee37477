"""``bins`` and ``save_mechanism`` on the engine route (issue #42 item 1): the engine bins as the
in-memory route does (explicit cut points, quantile bins, the automatic nested intervals of a
many-valued numeric column), so on COMPAS both routes publish the same release with the same
leakage.json figures; the scores carry the same per-value log-lift; a generalisation saved on
the engine route, applied in the engine (or in memory) to the same table, gives the audit's
release again."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privwatch.audit import run
from privwatch.audit._engine_bins import _quantiles
from privwatch.cli import app
from privwatch.datasets import COMPAS_OBSERVED, load_compas
from privwatch.engines import count_table, label_records
from privwatch.preprocessing import bin_columns
from privwatch.release import ReleaseNotMetWarning
from privwatch.release.generalisation import apply_saved_mechanism

#: Quantile bins, cut points, and none for age (the automatic nested intervals).
BINS: dict[str, Any] = {"priors_count": 4, "length_of_stay": [1, 8], "decile_score": [5, 8]}
#: leakage.json sections both routes fill from the same search.
SAME = ["status", "release", "held_out", "before", "after", "guarantee", "utility", "frontier"]
runner = CliRunner()


@pytest.fixture(scope="module")
def compas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("compas") / "compas.parquet"
    load_compas().to_parquet(path)
    return path


def _audit(source: Any, out: Path, **options: Any) -> Any:
    out.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(source=source, sensitive="race", observed=COMPAS_OBSERVED, bins=BINS,
                   epsilon=0.5, out=out, **options)  # fmt: skip


@pytest.fixture(scope="module")
def in_memory(compas: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    res = _audit(compas, tmp_path_factory.mktemp("mem") / "out", engine="pandas")
    assert res.route == "memory"
    return res


def _close(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ (floats to 1e-9)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in _close(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _close(x, y, path)]
    if isinstance(a, float) and isinstance(b, float):
        return [] if a == b or abs(a - b) < 1e-9 else [f"{path}: {a} != {b}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def _same_as_memory(res: Any, mem: Any, out: Path) -> None:
    assert res.route == "engine"
    assert res.settings["bins"] == mem.settings["bins"]
    assert set(res.settings["hierarchies"]) == set(mem.settings["hierarchies"]) == {"age"}
    for key in SAME:
        assert not _close(res.leakage[key], mem.leakage[key]), (
            key,
            _close(res.leakage[key], mem.leakage[key]),
        )
    release = pd.read_parquet(out / "release.parquet").sort_values("record")
    expected = mem.release.reset_index(drop=True).astype(str)
    got = release.drop(columns="record").reset_index(drop=True).astype(str)
    pd.testing.assert_frame_equal(got, expected[got.columns], check_dtype=False)
    # the same released cells with the same counts
    counts = got.value_counts().sort_index()
    assert counts.equals(expected[got.columns].value_counts().sort_index())
    scores = pd.read_parquet(out / "scores.parquet").sort_values("record")
    lift = [c for c in scores.columns if c.startswith("log_lift[")]
    assert lift == ["log_lift[African-American]", "log_lift[Caucasian]"]
    np.testing.assert_allclose(scores[lift].to_numpy(), mem.scores[lift].to_numpy(), atol=1e-12)


@pytest.mark.parametrize(
    "engine", ["duckdb", "polars", "pandas", pytest.param("spark", marks=pytest.mark.slow)]
)
def test_engine_bins_give_the_in_memory_release(
    engine: str, compas: Path, in_memory: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if engine == "spark":
        request.getfixturevalue("local_spark")
    glob = str(compas.parent / "*.parquet")  # a glob: never audited in memory
    res = _audit(glob, tmp_path / "out", engine=engine)
    assert res.engine == engine
    _same_as_memory(res, in_memory, tmp_path / "out")


def test_database_bins_give_the_in_memory_release(
    postgres_url: str, in_memory: Any, tmp_path: Path
) -> None:
    import sqlalchemy

    eng = sqlalchemy.create_engine(postgres_url.replace("://", "+psycopg://", 1))
    load_compas()[["race", *COMPAS_OBSERVED]].to_sql("compas_bins", eng, index=False,
                                                     if_exists="replace")  # fmt: skip
    eng.dispose()
    res = _audit(postgres_url, tmp_path / "out", table="compas_bins")
    assert res.engine == "sql"
    _same_as_memory(res, in_memory, tmp_path / "out")


def test_without_bins_the_routes_bin_age_alike(compas: Path, tmp_path: Path) -> None:
    """Raw COMPAS: both routes bin the many-valued numeric columns into nested intervals."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opts = {"sensitive": "race", "observed": ["sex", "age", "priors_count"], "epsilon": 0.5}
        mem = run(source=compas, engine="pandas", **opts)
        (tmp_path / "e").mkdir()
        eng = run(source=compas, engine="duckdb", out=tmp_path / "e", **opts)
    assert (mem.route, eng.route) == ("memory", "engine")
    assert eng.settings["bins"] == mem.settings["bins"] and "age" in eng.settings["bins"]
    assert not _close(eng.leakage["release"], mem.leakage["release"])


@pytest.mark.parametrize("engine", ["duckdb", "polars", "pandas"])
def test_count_and_label_bin_in_the_engine(engine: str, tmp_path: Path) -> None:
    g = np.random.default_rng(3)
    df = pd.DataFrame({"s": g.integers(0, 2, 400), "v": g.normal(40, 15, 400).round(1),
                       "x": g.choice(list("ab"), 400)})  # fmt: skip
    df.loc[::37, "v"] = np.nan
    df.to_parquet(tmp_path / "t.parquet")
    edges = [25.0, 40.0, 52.5]
    got = count_table(tmp_path / "t.parquet", ["s"], ["v", "x"], engine=engine, bins={"v": edges})
    ref = bin_columns(df, {"v": edges}).astype(object)
    ref = ref.where(ref.notna(), None).groupby(["v", "x", "s"], dropna=False).size()
    assert got.set_index(["v", "x", "s"])["count"].sort_index().to_dict() == ref.to_dict()
    assert got.attrs["missing"]["v"] == int(df["v"].isna().sum())
    mapping = got[["v", "x"]].drop_duplicates().reset_index(drop=True)
    mapping["release_v"] = [f"bin {v}" if isinstance(v, str) else "gap" for v in mapping["v"]]
    labelled = label_records(tmp_path / "t.parquet", mapping, ["v", "x"], engine=engine,
                             columns={"record": "privwatch_row", "v": "release_v"},
                             bins={"v": edges})  # fmt: skip
    expected = bin_columns(df, {"v": edges})["v"].astype(object)
    assert labelled["v"].tolist() == [f"bin {v}" if isinstance(v, str) else "gap"
                                      for v in expected]  # fmt: skip


def test_quantiles_from_counts_are_numpys() -> None:
    g = np.random.default_rng(0)
    for _ in range(300):
        x = g.choice(g.normal(size=int(g.integers(1, 40))) * 100, int(g.integers(1, 300)))
        qs = np.linspace(0, 1, int(g.integers(2, 17)) + 1)[1:-1]
        v, c = np.unique(x, return_counts=True)
        assert np.array_equal(_quantiles(v, c, qs), np.quantile(x, qs))


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_mechanism_saved_on_the_engine_route_applies_in_the_engine(
    engine: str, compas: Path, tmp_path: Path
) -> None:
    glob = str(compas.parent / "*.parquet")
    args = ["audit", glob, "--engine", engine, "--sensitive", "race", "--observed",
            ",".join(COMPAS_OBSERVED), "--bins", "priors_count=4", "--bins",
            "length_of_stay=1,8", "--epsilon", "0.5", "--out", str(tmp_path / "a"),
            "--save-mechanism", str(tmp_path / "M.json"), "--json"]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "M.json").read_text())
    assert doc["kind"] == "Generalisation" and "age" in doc["state"]["bins"]
    audited = pd.read_parquet(tmp_path / "a" / "release.parquet").sort_values("record")
    audited = audited.reset_index(drop=True)
    # in the engine: the audit's release file again, and every tuple seen
    res = runner.invoke(app, ["apply", str(tmp_path / "M.json"), glob, "--engine", engine,
                              "--out", str(tmp_path / "e"), "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_unseen"] == 0
    applied = pd.read_parquet(tmp_path / "e" / "release.parquet").sort_values("record")
    assert not applied["unseen"].any()
    pd.testing.assert_frame_equal(applied.drop(columns="unseen").reset_index(drop=True), audited)
    # in memory: the same released values
    batch = apply_saved_mechanism(tmp_path / "M.json", compas, tmp_path / "m", engine="pandas")
    assert batch.applied is not None
    mem = batch.applied.released.astype(str).reset_index(drop=True)
    pd.testing.assert_frame_equal(mem, audited.drop(columns="record").astype(str))


def test_engine_apply_suppresses_unseen_and_missing(compas: Path, tmp_path: Path) -> None:
    """New records in the engine: a tuple never seen, or with a missing value, is '*'."""
    glob = str(compas.parent / "*.parquet")
    (tmp_path / "a").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        res = run(source=glob, engine="duckdb", sensitive="race", observed=["sex", "age"],
                  bins={"age": [30, 50]}, epsilon=2.0, out=tmp_path / "a")  # fmt: skip
    res.mechanism().save(tmp_path / "M.json")
    new = pd.DataFrame({"sex": ["Male", "Alien", None, "Female"], "age": [20, 40, 60, np.nan]})
    new.to_parquet(tmp_path / "new.parquet")
    batch = apply_saved_mechanism(tmp_path / "M.json", tmp_path / "new.parquet",
                                  tmp_path / "o", engine="duckdb")  # fmt: skip
    out = pd.read_parquet(tmp_path / "o" / "release.parquet").sort_values("record")
    assert out["unseen"].tolist() == [False, True, True, True]
    assert batch.summary["n_unseen"] == 3 and batch.summary["n_records"] == 4
    assert (out.loc[out["unseen"], ["sex", "age"]] == "*").all().all()
    assert out["age"].iloc[0] in ("<30", "*")


def test_parquet_statistics_bound_the_distinct_counts(tmp_path: Path) -> None:
    """The footers' min/max bound every integer column's distinct values (one more with a
    missing value); a float column, or a bound above ``at_most``, is counted in the engine."""
    from privwatch.engines import distinct_counts
    from privwatch.engines._sources import parquet_distinct_bounds

    g = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame(
        {
            "few": g.integers(3, 9, n),
            "gaps": g.choice([0, 40], n),
            "holes": pd.array(np.where(g.random(n) < 0.1, None, g.integers(0, 4, n)), "Int64"),
            "many": g.integers(0, 500, n),
            "real": g.integers(0, 3, n).astype(float),
        }
    )
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, row_group_size=700)
    cols = list(frame.columns)
    bounds = parquet_distinct_bounds([str(path)], cols)
    assert bounds == {"few": 6, "gaps": 41, "holes": 5, "many": 500}
    exact = distinct_counts(str(path), cols, engine="duckdb")
    for c, b in bounds.items():
        assert exact[c] <= b
    got = distinct_counts(str(path), cols, engine="duckdb", at_most=50)
    assert got == {**exact, "few": 6, "gaps": 41, "holes": 5}
