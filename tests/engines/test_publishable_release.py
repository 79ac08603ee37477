"""The release file of every route is publishable (issue #42): the record key and the released
observed columns, nothing else — no column of the source that is not released (an id, a date,
a free number), and never the sensitive one — on DuckDB, Polars, pandas, Spark, PostgreSQL and
the streamed route; the scores go to their own file."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch.audit import run
from privwatch.release import ReleaseNotMetWarning

OBS = ["a", "b"]
#: The source's columns that must never reach the release file.
PRIVATE = ["id", "race", "admitted", "income"]


def _table(n: int = 1200, seed: int = 5) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    race = g.choice(["p", "q", "r"], n, p=[0.5, 0.3, 0.2])
    code = pd.Series(race).map({"p": 0, "q": 1, "r": 2}).to_numpy()
    return pd.DataFrame(
        {
            "id": np.arange(10_000, 10_000 + n),
            "race": race,
            "a": (code + g.integers(0, 3, n)) % 4,
            "b": g.choice(["x", "y", "z"], n),
            "admitted": pd.Timestamp("2020-01-01") + pd.to_timedelta(g.integers(0, 900, n), "D"),
            "income": np.round(g.normal(40_000, 9_000, n), 2),
        }
    )


def _lake(folder: Path, df: pd.DataFrame) -> str:
    folder.mkdir()
    df.iloc[: len(df) // 2].to_parquet(folder / "part-0.parquet", row_group_size=300)
    df.iloc[len(df) // 2 :].to_parquet(folder / "part-1.parquet", row_group_size=300)
    return str(folder / "part-*.parquet")


def _publishable(release: pd.DataFrame, scores: pd.DataFrame, df: pd.DataFrame) -> None:
    """Exactly the key and the released columns; the key numbers every record once; the
    scores hold no column of the source either."""
    assert list(release.columns) == ["record", *OBS]
    assert not set(PRIVATE) & set(release.columns) and not set(PRIVATE) & set(scores.columns)
    assert sorted(release["record"]) == sorted(scores["record"]) == list(range(len(df)))
    # no value of the id or the sensitive column hides in a released column either
    released = set(release[OBS].astype(str).to_numpy().ravel())
    assert not released & set(df["id"].astype(str)) and not released & set(df["race"])


def _audit(source: Any, out: Path, **options: Any) -> Any:
    out.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        return run(source=source, sensitive="race", observed=OBS, out=out, **options)


@pytest.mark.parametrize(
    "engine", ["duckdb", "polars", "pandas", pytest.param("spark", marks=pytest.mark.slow)]
)
def test_the_engine_route_writes_a_publishable_release(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    if engine == "spark":
        request.getfixturevalue("local_spark")
    df = _table()
    res = _audit(_lake(tmp_path / "lake", df), tmp_path / "out", engine=engine, epsilon=0.5)
    assert (res.route, res.engine) == ("engine", engine)
    files = [tmp_path / "out" / f for f in ("release.parquet", "scores.parquet")]
    assert res.written == [str(f) for f in files]
    _publishable(*(pd.read_parquet(f) for f in files), df)


def test_the_database_tables_are_publishable_too(tmp_path: Path, postgres_url: str) -> None:
    """``write_table``: two new tables named for what they hold, the release one publishable."""
    import sqlalchemy

    df = _table()
    eng = sqlalchemy.create_engine(postgres_url.replace("://", "+psycopg://", 1))
    df.to_sql("patients", eng, index=False, if_exists="replace")
    res = _audit(postgres_url, tmp_path / "out", table="patients", write_table="patients_audit",
                 epsilon=0.5)  # fmt: skip
    assert res.written == ["table patients_audit_release", "table patients_audit_scores"]
    with eng.connect() as c:
        release, scores = (
            pd.read_sql(f"SELECT * FROM patients_audit_{k}", c) for k in ("release", "scores")
        )
    eng.dispose()
    _publishable(release, scores, df)
    assert not (tmp_path / "out" / "release.parquet").exists()  # asked for the database only


def test_the_streamed_route_writes_a_publishable_release(tmp_path: Path) -> None:
    df = _table(600).drop(columns=["admitted"])  # the streamed route reads what it needs
    df["a"] = df["a"].astype(float)
    res = _audit(_lake(tmp_path / "lake", df), tmp_path / "out", estimator="dv", epsilon=0.3,
                 folds=2, estimator_params={"epochs": 2, "n_ensemble": 1})  # fmt: skip
    assert res.route == "stream"
    names = ("release.parquet", "scores.parquet")
    release, scores = (pd.read_parquet(tmp_path / "out" / f) for f in names)
    _publishable(release, scores, df)
    assert list(scores.columns) == ["record", "fold", "log_lift[p]", "log_lift[q]",
                                    "log_lift[r]", "risk", "flagged"]  # fmt: skip
