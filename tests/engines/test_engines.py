"""count_table and label_records give identical results on every engine."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch.engines import ROW_COLUMN, count_table, fold_of, label_records, read_table
from privwatch.release import ReleaseNotMetWarning

SENS, OBS = ["s"], ["x1", "x2", "x3"]


def _data(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x2 = rng.integers(0, 5, n).astype(float)
    x2[rng.random(n) < 0.03] = np.nan  # a missing-value group
    return pd.DataFrame(
        {
            "s": rng.integers(0, 3, n),
            "x1": rng.choice(["a", "b", "c"], n),
            "x2": x2,
            "x3": rng.random(n) < 0.4,
            "other": rng.random(n),
        }
    )


def _by_hand(
    df: pd.DataFrame, folds: int | None, seed: int = 0, obs: list[str] = OBS
) -> dict[tuple[object, ...], int]:
    out: dict[tuple[object, ...], int] = {}
    f = fold_of(np.arange(len(df)), folds, seed) if folds else None
    for i, row in enumerate(df[[*obs, *SENS]].itertuples(index=False)):
        key = tuple(None if isinstance(v, float) and np.isnan(v) else v for v in row)
        key = key + ((int(f[i]),) if f is not None else ())
        out[key] = out.get(key, 0) + 1
    return out


def _as_dict(t: pd.DataFrame) -> dict[tuple[object, ...], int]:
    keys = [c for c in t.columns if c != "count"]
    return {tuple(r[:-1]): int(r[-1]) for r in t[[*keys, "count"]].itertuples(index=False)}


def _hash(frame: pd.DataFrame) -> str:
    norm = frame.astype(object).where(frame.notna(), None)
    return hashlib.sha256(norm.to_csv(index=False).encode()).hexdigest()


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    df = _data()
    d = tmp_path_factory.mktemp("lake")
    df.iloc[:1200].to_parquet(d / "part-0.parquet")
    df.iloc[1200:].to_parquet(d / "part-1.parquet")
    return df, d


@pytest.mark.parametrize("engine", ["pandas", "polars", "duckdb"])
@pytest.mark.parametrize("folds", [None, 5])
def test_counts_from_parquet_glob_equal_counting_by_hand(
    parquet: tuple[pd.DataFrame, Path], engine: str, folds: int | None
) -> None:
    df, d = parquet
    t = count_table(str(d / "*.parquet"), SENS, OBS, engine=engine, folds=folds)
    assert t.attrs["engine"] == engine
    assert _as_dict(t) == _by_hand(df, folds)
    assert t.attrs["missing"]["x2"] == int(df["x2"].isna().sum()) > 0
    assert list(t.columns) == [*OBS, *SENS, *(["fold"] if folds else []), "count"]
    assert t["count"].dtype == np.int64


def test_in_memory_frames_give_the_same_table(parquet: tuple[pd.DataFrame, Path]) -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    df, _ = parquet
    ref = count_table(df, SENS, OBS, folds=4, seed=7)
    for native in (pl.from_pandas(df), pl.from_pandas(df).lazy(), duckdb.from_df(df)):
        got = count_table(native, SENS, OBS, folds=4, seed=7)
        pd.testing.assert_frame_equal(got, ref)
    # value types: ints as int, floats as float, strings as str, booleans as bool, missing None
    row = ref.iloc[0]
    assert (type(row["x1"]), type(row["x3"]), type(row["s"])) == (str, bool, int)
    assert {type(v) for v in ref["x2"]} == {float, type(None)}


def _by_row(frame: pd.DataFrame) -> pd.DataFrame:
    """Written records come in the engine's scan order: restore the input order."""
    return frame.sort_values(ROW_COLUMN).reset_index(drop=True)


def test_labelling_is_identical_and_carries_the_row_position(
    parquet: tuple[pd.DataFrame, Path], tmp_path: Path
) -> None:
    df, d = parquet
    t = count_table(df, SENS, OBS)
    tuples = t[OBS].drop_duplicates().reset_index(drop=True)
    mapping = tuples.assign(
        release=[f"r{i}" for i in range(len(tuples))], flag=np.arange(len(tuples)) % 2 == 0
    )
    ref = label_records(df, mapping, OBS)
    assert ref is not None and len(ref) == len(df)
    assert ref[ROW_COLUMN].tolist() == list(range(len(df)))  # returned frames: input order
    assert list(ref.columns) == [*df.columns, ROW_COLUMN, "release", "flag"]
    assert ref["release"].notna().all()  # the missing-value tuple is labelled too
    expected = df[OBS].astype(object).where(df[OBS].notna(), None).apply(tuple, axis=1)
    lookup = {tuple(r[:3]): r[3] for r in mapping.itertuples(index=False)}
    assert ref["release"].tolist() == [lookup[k] for k in expected]
    for engine in ("pandas", "polars", "duckdb"):
        out = tmp_path / f"{engine}.parquet"
        assert label_records(str(d / "*.parquet"), mapping, OBS, engine=engine, out=out) is None
        assert _hash(_by_row(pd.read_parquet(out))) == _hash(ref), engine
    kept = label_records(str(d / "*.parquet"), mapping, OBS, engine="duckdb", keep_columns=["s"])
    assert kept is not None and list(kept.columns) == ["s", ROW_COLUMN, "release", "flag"]
    assert _hash(kept) == _hash(ref[["s", ROW_COLUMN, "release", "flag"]])
    # ``columns``: exactly these, renamed (a release file: the key and a released value only)
    picked = {"record": ROW_COLUMN, "x1": "release"}
    want = ref[[ROW_COLUMN, "release"]].set_axis(["record", "x1"], axis=1)
    for engine in ("pandas", "polars", "duckdb"):
        out = tmp_path / f"{engine}-picked.parquet"
        label_records(str(d / "*.parquet"), mapping, OBS, engine=engine, out=out, columns=picked)
        got = pd.read_parquet(out).sort_values("record").reset_index(drop=True)
        assert list(got.columns) == ["record", "x1"] and _hash(got) == _hash(want), engine


def test_fold_of_balanced_and_free_of_row_patterns() -> None:
    n = 2_000_000
    for k in (2, 5, 10):
        for idx in (
            np.arange(n),
            np.arange(0, 3 * n, 3),
            np.arange(1, 2 * n, 2),
            np.arange(n) + 10**8,
        ):
            c = np.bincount(fold_of(idx, k, seed=11), minlength=k)
            assert np.abs(c / c.mean() - 1).max() < 0.01
    # a sensitive value that alternates with the row position is spread evenly over folds
    f = fold_of(np.arange(n), 5)
    for r in range(4):
        c = np.bincount(f[np.arange(n) % 4 == r], minlength=5)
        assert np.abs(c / c.mean() - 1).max() < 0.01
    assert not np.array_equal(fold_of(np.arange(100), 5, 0), fold_of(np.arange(100), 5, 1))


def test_postgres_counts_and_labels_like_the_file_engines(
    postgres_url: str, parquet: tuple[pd.DataFrame, Path]
) -> None:
    import sqlalchemy

    df, _ = parquet
    eng = sqlalchemy.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://"))
    df.to_sql("records", eng, if_exists="replace", index=False)
    eng.dispose()
    for folds in (None, 3):
        got = count_table(postgres_url, SENS, OBS, table="records", folds=folds)
        assert got.attrs["engine"] == "sql"
        pd.testing.assert_frame_equal(got, count_table(df, SENS, OBS, folds=folds))
    t = count_table(df, SENS, OBS)
    tuples = t[OBS].drop_duplicates().reset_index(drop=True)
    mapping = tuples.assign(release=[f"r{i}" for i in range(len(tuples))])
    ref = label_records(df, mapping, OBS)
    assert ref is not None
    got_pg = label_records(postgres_url, mapping, OBS, table="records")
    assert got_pg is not None
    assert _hash(got_pg) == _hash(ref)
    label_records(postgres_url, mapping, OBS, table="records", write_table="records_released")
    eng = sqlalchemy.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://"))
    back = pd.read_sql('SELECT * FROM records_released ORDER BY "privwatch_row"', eng)
    eng.dispose()
    assert back["release"].tolist() == ref["release"].tolist()


@pytest.mark.slow
def test_spark_local_counts_and_labels_like_pandas(
    parquet: tuple[pd.DataFrame, Path], tmp_path: Path, local_spark: Any
) -> None:
    df, d = parquet
    sdf = local_spark.createDataFrame(df.astype(object).where(df.notna(), None))
    for folds in (None, 3):
        got = count_table(sdf, SENS, OBS, folds=folds)
        pd.testing.assert_frame_equal(got, count_table(df, SENS, OBS, folds=folds))
    t = count_table(df, SENS, OBS)
    tuples = t[OBS].drop_duplicates().reset_index(drop=True)
    mapping = tuples.assign(release=[f"r{i}" for i in range(len(tuples))])
    ref = label_records(df, mapping, OBS)
    labelled = label_records(sdf, mapping, OBS)
    assert labelled is not None and ref is not None
    assert _hash(labelled) == _hash(ref)
    _spark_frame_is_an_engine_route_audit(sdf, d, tmp_path)


@pytest.mark.slow
def test_spark_files_count_and_label_like_duckdb(
    parquet: tuple[pd.DataFrame, Path], tmp_path: Path, local_spark: Any
) -> None:
    """Parquet and CSV files on Spark: the row positions (from the file metadata, or each
    partition's size) give the folds DuckDB gives, and the written labels carry them."""
    df, d = parquet
    csv = tmp_path / "csv"
    csv.mkdir()
    obs = ["x1", "x3"]  # read back from CSV with the same types
    df.iloc[:1000].to_csv(csv / "a.csv", index=False)
    df.iloc[1000:].to_csv(csv / "b.csv", index=False)
    for glob in (str(d / "*.parquet"), str(csv / "*.csv")):
        ref = count_table(glob, SENS, obs, engine="duckdb", folds=5, seed=3)
        got = count_table(glob, SENS, obs, engine="spark", folds=5, seed=3)
        pd.testing.assert_frame_equal(got, ref)
        assert _as_dict(got) == _by_hand(df, 5, seed=3, obs=obs)
    t = count_table(df, SENS, OBS)
    tuples = t[OBS].drop_duplicates().reset_index(drop=True)
    mapping = tuples.assign(release=[f"r{i}" for i in range(len(tuples))])
    many = local_spark.read.parquet(str(d / "*.parquet")).repartition(7)  # a frame's own order
    assert count_table(many, SENS, obs, folds=2)["count"].sum() == len(df)
    numbered = label_records(many, mapping, OBS)  # every position once, over 7 partitions
    assert numbered is not None and numbered[ROW_COLUMN].tolist() == list(range(len(df)))
    ref_out, out = tmp_path / "ref.parquet", tmp_path / "spark.parquet"
    label_records(str(d / "*.parquet"), mapping, OBS, engine="duckdb", out=ref_out)
    label_records(str(d / "*.parquet"), mapping, OBS, engine="spark", out=out)
    expected = _by_row(pd.read_parquet(ref_out))
    assert _hash(_by_row(pd.read_parquet(out))[expected.columns]) == _hash(expected)


def _spark_frame_is_an_engine_route_audit(sdf: Any, lake: Path, tmp_path: Path) -> None:
    """A Spark frame is a source of :func:`privwatch.audit.run` (the engine route): counted and
    labelled on the cluster, the same release as the same audit of the Parquet files in DuckDB,
    every record written to release.parquet."""
    from privwatch.audit import run

    obs = ["x1", "x3"]  # no missing values: the engine route refuses them by default
    options: dict[str, Any] = {"sensitive": SENS, "observed": obs, "epsilon": 0.5, "folds": 3}
    (tmp_path / "spark").mkdir()
    (tmp_path / "duckdb").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        res = run(source=sdf, out=tmp_path / "spark", **options)
        ref = run(
            source=str(lake / "*.parquet"), engine="duckdb", out=tmp_path / "duckdb", **options
        )
    assert (res.route, res.engine, ref.engine) == ("engine", "spark", "duckdb")
    assert res.found is not None and ref.found is not None
    pd.testing.assert_frame_equal(res.found.mapping, ref.found.mapping)
    drop = {"warnings"}  # Spark may warn about its own session
    assert {k: v for k, v in res.leakage.items() if k not in drop} == {
        k: v for k, v in ref.leakage.items() if k not in drop
    }
    assert res.written == [
        str(tmp_path / "spark" / f) for f in ("release.parquet", "scores.parquet")
    ]
    on_cluster = pd.read_parquet(res.written[0])  # unordered: compare the multiset of releases
    local = pd.read_parquet(tmp_path / "duckdb" / "release.parquet")
    assert list(on_cluster.columns) == list(local.columns) == ["record", *obs]  # nothing else
    assert len(on_cluster) == len(local) == 3000
    assert on_cluster.value_counts(obs).to_dict() == local.value_counts(obs).to_dict()
    scores = pd.read_parquet(res.written[1])
    assert "s" not in scores.columns and sorted(scores["record"]) == list(range(3000))


def test_read_table_formats_and_errors(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "é"]})
    (tmp_path / "t.csv").write_text("a;b\n1;x\n2;é\n", encoding="latin-1")
    with pytest.raises(ValueError, match="not valid utf-8.*encoding"):
        read_table(tmp_path / "t.csv")
    assert read_table(tmp_path / "t.csv", encoding="latin-1").equals(df)
    df.to_parquet(tmp_path / "t.parquet")
    assert read_table(tmp_path / "t.parquet").equals(df)
    df.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    assert read_table(tmp_path / "t.jsonl")["b"].tolist() == ["x", "é"]
    pytest.importorskip("openpyxl")
    df.to_excel(tmp_path / "t.xlsx", index=False)
    assert read_table(tmp_path / "t.xlsx")["a"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="`path` must end in"):
        read_table(tmp_path / "t.jsonl".replace("jsonl", "json")) if (
            tmp_path / "t.json"
        ).write_text("{}") else None


def test_bad_inputs() -> None:
    df = _data(50)
    with pytest.raises(ValueError, match="`sensitive` must be a non-empty list"):
        count_table(df, "s", OBS)
    with pytest.raises(ValueError, match="`engine` must be one of"):
        count_table(df, SENS, OBS, engine="oracle")
    with pytest.raises(ValueError, match="no column"):
        count_table(df, SENS, ["nope"])
    with pytest.raises(ValueError, match=r"`folds` must be an integer in \[2, 2\*\*31\)"):
        count_table(df, SENS, OBS, folds=1)
    with pytest.raises(ValueError, match="`table` must name a table"):
        count_table("postgresql://u@h/db", SENS, OBS)
    with pytest.raises(ValueError, match="not found"):
        count_table("/nonexistent/*.parquet", SENS, OBS)
    with pytest.raises(ValueError, match="one row per distinct"):
        label_records(df, pd.DataFrame({"x1": ["a", "a"]}), ["x1"])
    clash = df.assign(**{ROW_COLUMN: 0})
    mapping = pd.DataFrame({"x1": ["a", "b", "c"], "release": ["a", "b", "c"]})
    with pytest.raises(ValueError, match="must not have a column named 'privwatch_row'"):
        label_records(clash, mapping, ["x1"])
    with pytest.raises(ValueError, match="must not have a column named 'privwatch_row'"):
        count_table(clash, SENS, OBS, folds=3)
    assert count_table(clash, SENS, OBS)["count"].sum() == len(df)  # no folds: no row column
    internal = df.rename(columns={"x1": "_privwatch_fold_count_0"})
    with pytest.raises(ValueError, match="not starting with '_privwatch_fold_count_'"):
        count_table(internal, SENS, ["_privwatch_fold_count_0"], folds=3)


def test_iter_batches_streams_a_parquet_glob_in_order(
    parquet: tuple[pd.DataFrame, Path],
) -> None:
    from privwatch.engines import iter_batches

    df, d = parquet
    batches = list(iter_batches(str(d / "*.parquet"), ["s", "x1"], batch_size=500))
    assert max(len(b) for b in batches) == 500 and list(batches[0].columns) == ["s", "x1"]
    got = pd.concat(batches, ignore_index=True)
    pd.testing.assert_frame_equal(got, df[["s", "x1"]])
    with pytest.raises(ValueError, match="`batch_size` must be a positive integer"):
        next(iter_batches(str(d / "*.parquet"), batch_size=0))
    with pytest.raises(ValueError, match="`columns` must be columns of"):
        next(iter_batches(str(d / "*.parquet"), ["nope"]))
    with pytest.raises(ValueError, match="must name existing Parquet files"):
        next(iter_batches(str(d / "none-*.parquet")))
