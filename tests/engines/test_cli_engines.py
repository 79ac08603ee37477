"""``privwatch audit`` on Parquet globs, DuckDB/SQLite files and a real PostgreSQL server.

Every source gets the same assertions: the engine route's release and flags equal the
in-memory audit's (same epsilon, same folds), record by record in input order; the engine and
why are stated; the output lands where ``--write-table`` says. Every route writes the same two
record files: a publishable release (the record key and the released observed columns, no
other column of the source, the sensitive one least of all) and the scores.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privwatch.cli import app
from privwatch.report import COMMON_FILES

runner = CliRunner()
OBS = ["a", "b", "c"]
EPS = "0.3"


def _records(n: int = 4000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 3, n)
    return pd.DataFrame(
        {
            "s": s,
            "a": (s + rng.integers(0, 3, n)) % 4,
            "b": rng.integers(0, 5, n),
            "c": rng.choice(["x", "y", "z"], n),
            "other": rng.random(n),
        }
    )


def _audit(*args: str) -> dict[str, Any]:
    res = runner.invoke(app, ["audit", *args, "--sensitive", "s", "--observed", ",".join(OBS),
                              "--epsilon", EPS, "--json"])  # fmt: skip
    assert res.exit_code in (0, 3), res.output
    assert os.environ.get("PGPASSWORD", "\0") not in res.output  # never echoed
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path, pd.DataFrame]:
    """The records as two Parquet files and one, and the in-memory audit's release."""
    df = _records()
    d = tmp_path_factory.mktemp("lake")
    df.iloc[:1500].to_parquet(d / "part-0.parquet")
    df.iloc[1500:].to_parquet(d / "part-1.parquet")
    df.to_parquet(d / "all.parquet")
    doc = _audit(str(d / "all.parquet"), "--out", str(d / "mem"), "--no-checks")
    assert doc["engine"] == "pandas" and "threshold -> pandas" in doc["engine_reason"]
    release = pd.read_csv(d / "mem" / "release.csv", dtype=str)
    scores = pd.read_csv(d / "mem" / "scores.csv")
    assert list(scores.columns) == SCORES  # the engine route's, below
    reference = release[OBS].assign(flagged=scores["flagged"].to_numpy())
    return df, d, reference


#: The columns of the engine route's scores: scores.csv's of the in-memory search (with
#: --no-checks), the per-value log-lifts of the count table included (issue #42).
SCORES = ["record", "log_lift[0]", "log_lift[1]", "log_lift[2]", "risk", "flagged",
          "suppressed", "released_cell_log_lift", "advice_column", "advice_risk"]  # fmt: skip


def _records_files(release: pd.DataFrame, scores: pd.DataFrame, n: int) -> pd.DataFrame:
    """The two record files checked and joined on the record key, in input order: the release
    holds the key and the released observed columns only (no sensitive, no ``other``, no
    ``privwatch_row``), the scores the key and the scores only; each record once in each."""
    assert list(release.columns) == ["record", *OBS]
    assert list(scores.columns) == SCORES
    for frame in (release, scores):
        assert sorted(frame["record"]) == list(range(n))  # every record once, any scan order
    return release.merge(scores, on="record").sort_values("record").reset_index(drop=True)


def _same_release(labelled: pd.DataFrame, reference: pd.DataFrame) -> None:
    assert len(labelled) == len(reference)
    for c in OBS:
        assert labelled[c].astype(str).tolist() == reference[c].tolist(), c
    assert labelled["flagged"].astype(bool).tolist() == reference["flagged"].tolist()


@pytest.mark.parametrize(
    "engine", ["duckdb", "polars", "pandas", pytest.param("spark", marks=pytest.mark.slow)]
)
def test_parquet_glob_in_the_engine_releases_like_the_in_memory_audit(
    lake: tuple[pd.DataFrame, Path, pd.DataFrame], tmp_path: Path, engine: str
) -> None:
    df, d, reference = lake
    if engine == "spark":
        pyspark_sql = pytest.importorskip("pyspark.sql")
        pyspark_sql.SparkSession.builder.master("local[2]").config(
            "spark.ui.enabled", "false"
        ).getOrCreate()
    doc = _audit(str(d / "part-*.parquet"), "--engine", engine, "--out", str(tmp_path))
    assert doc["engine"] == engine and doc["n_records"] == len(df)
    # every route writes the common files (report included), the engine its two record files
    assert doc["files"] == [*COMMON_FILES, "release.parquet", "scores.parquet"]
    release, scores = (pd.read_parquet(tmp_path / f) for f in ("release.parquet", "scores.parquet"))
    _same_release(_records_files(release, scores, len(df)), reference)
    leakage = json.loads((tmp_path / "leakage.json").read_text())
    assert leakage["route"] == "engine" and leakage["engine"] == engine


def _database_sources(df: pd.DataFrame, tmp: Path, postgres_url: str | None) -> dict[str, str]:
    import sqlalchemy

    duckdb = pytest.importorskip("duckdb")
    urls = {"sqlite": f"sqlite:///{tmp / 'records.sqlite'}", "duckdb": f"duckdb:///{tmp / 'r.db'}"}
    eng = sqlalchemy.create_engine(urls["sqlite"])
    df.to_sql("records", eng, index=False)
    eng.dispose()
    con = duckdb.connect(str(tmp / "r.db"))
    con.register("df", df)
    con.execute("CREATE TABLE records AS SELECT * FROM df")
    con.close()
    if postgres_url is not None:
        urls["postgresql"] = postgres_url
        eng = sqlalchemy.create_engine(postgres_url.replace("://", "+psycopg://", 1))
        df.to_sql("records", eng, index=False, if_exists="replace")
        eng.dispose()
    return urls


def _read_table(url: str, name: str) -> pd.DataFrame:
    import sqlalchemy

    eng = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with eng.connect() as c:
        out = pd.read_sql(f"SELECT * FROM {name}", c)
    eng.dispose()
    return out


@pytest.mark.parametrize("kind", ["sqlite", "duckdb", "postgresql"])
def test_database_table_in_the_database_releases_like_the_in_memory_audit(
    lake: tuple[pd.DataFrame, Path, pd.DataFrame],
    tmp_path: Path,
    kind: str,
    request: pytest.FixtureRequest,
) -> None:
    pytest.importorskip("sqlalchemy")
    df, _, reference = lake
    pg = request.getfixturevalue("postgres_url") if kind == "postgresql" else None
    url = _database_sources(df, tmp_path, pg)[kind]
    out = tmp_path / "out"
    args = [url, "--table", "records", "--out", str(out)]
    if kind == "duckdb":  # read-only file: the engine writes the two Parquet files to --out
        doc = _audit(*args)
        files = [pd.read_parquet(out / f) for f in ("release.parquet", "scores.parquet")]
        assert doc["written"] == [str(out / "release.parquet"), str(out / "scores.parquet")]
    else:  # asked for: two new tables in the database, named for what they hold
        doc = _audit(*args, "--write-table", "records_cli")
        files = [_read_table(url, f"records_cli_{k}") for k in ("release", "scores")]
        assert doc["written"] == ["table records_cli_release", "table records_cli_scores"]
        assert not (out / "release.parquet").exists()
    assert doc["engine"] == ("duckdb" if kind == "duckdb" else "sql")
    _same_release(_records_files(*files, len(df)), reference)


def test_credentials_are_never_echoed(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("psycopg")
    url = "postgresql://auditor:s3cr3t-pw@127.0.0.1:1/db"
    res = runner.invoke(app, ["audit", url, "--table", "t", "--sensitive", "s", "--observed",
                              "a", "--out", str(tmp_path / "o")])  # fmt: skip
    assert res.exit_code == 2
    assert "s3cr3t" not in res.output and "cannot connect" in res.stderr
    assert "auditor:***@127.0.0.1:1/db" in res.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "duckdb", "--delta", "0.1"], "--delta needs the records in memory"),
        (["--engine", "oracle"], "--engine must be one of"),
        (["--engine", "duckdb", "--missing", "category"], "--missing must be 'error' or 'drop'"),
    ],
)
def test_engine_route_errors(
    lake: tuple[pd.DataFrame, Path, pd.DataFrame],
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    _, d, _ = lake
    res = runner.invoke(app, ["audit", str(d / "part-*.parquet"), "--sensitive", "s",
                              "--observed", "a,b", "--out", str(tmp_path), *args])  # fmt: skip
    assert res.exit_code == 2, res.output
    assert message in res.stderr
    res = runner.invoke(app, ["audit", str(d / "nothing-*.parquet"), "--sensitive", "s",
                              "--observed", "a", "--out", str(tmp_path)])  # fmt: skip
    assert res.exit_code == 2 and "not found" in res.stderr


def test_engine_route_missing_values(tmp_path: Path) -> None:
    df = _records(600).astype({"b": float})
    df.loc[::50, "b"] = np.nan
    df.to_parquet(tmp_path / "m.parquet")
    base = ["audit", str(tmp_path / "m.parquet"), "--engine", "duckdb", "--sensitive", "s",
            "--observed", "a,b", "--epsilon", "1"]  # fmt: skip
    res = runner.invoke(app, [*base, "--out", str(tmp_path / "o1")])
    assert res.exit_code == 2 and "{'b': 12}" in res.stderr
    res = runner.invoke(app, [*base, "--out", str(tmp_path / "o2"), "--missing", "drop", "--json"])
    assert res.exit_code in (0, 3), res.output
    assert json.loads(res.stdout)["n_records"] == 600 - 12
    release = pd.read_parquet(tmp_path / "o2" / "release.parquet").sort_values("record")
    # no column of the source but these, and the in-memory files' mark of a dropped record
    assert list(release.columns) == ["record", "a", "b", "dropped_missing"]
    assert release["b"].isna().sum() == 12 and len(release) == 600
    assert release["dropped_missing"].sum() == 12
    scores = pd.read_parquet(tmp_path / "o2" / "scores.parquet").sort_values("record")
    assert scores["dropped_missing"].tolist() == release["dropped_missing"].tolist()
    # the same files as the in-memory audit of the same records
    in_memory = [*base[:3], "pandas", *base[4:], "--out", str(tmp_path / "m"), "--missing", "drop"]
    res = runner.invoke(app, in_memory)
    assert res.exit_code in (0, 3), res.output
    memory = pd.read_csv(tmp_path / "m" / "release.csv", dtype=str, keep_default_na=False)
    engine = release.astype(object).where(release.notna(), "").astype(str)
    assert engine.drop(columns="record").values.tolist() == memory.drop(
        columns="record").values.tolist()  # fmt: skip


def test_no_records_writes_the_verdict_and_no_record(
    lake: tuple[pd.DataFrame, Path, pd.DataFrame], tmp_path: Path
) -> None:
    """``--no-records``: the same verdict, mapping and report as with records, and no
    per-record file, on the engine route and on the in-memory route."""
    _, d, _ = lake
    glob = str(d / "part-*.parquet")
    full = _audit(glob, "--engine", "duckdb", "--out", str(tmp_path / "full"))
    bare = _audit(glob, "--engine", "duckdb", "--out", str(tmp_path / "bare"), "--no-records")
    assert full["files"] == [*COMMON_FILES, "release.parquet", "scores.parquet"]
    assert bare["files"] == list(COMMON_FILES)
    assert sorted(p.name for p in (tmp_path / "bare").iterdir()) == sorted(COMMON_FILES)
    leak = [json.loads((tmp_path / k / "leakage.json").read_text()) for k in ("full", "bare")]
    assert [Path(w).name for w in leak[0]["written"]] == ["release.parquet", "scores.parquet"]
    assert "written" not in leak[1]
    assert leak[0]["status"] == leak[1]["status"]
    assert leak[0]["release"] == leak[1]["release"]
    mem = _audit(str(d / "all.parquet"), "--out", str(tmp_path / "mem"), "--no-records",
                 "--no-checks")  # fmt: skip
    assert mem["engine"] == "pandas" and mem["files"] == list(COMMON_FILES)
    res = runner.invoke(app, ["audit", glob, "--sensitive", "s", "--observed", "a",
                              "--no-records", "--write-table", "w",
                              "--out", str(tmp_path / "o")])  # fmt: skip
    assert res.exit_code == 2 and "--write-table" in res.stderr and "--no-records" in res.stderr
