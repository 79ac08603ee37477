"""DuckDB's labelling on one packed integer key labels every record as the join on the columns.

Records with values outside the mapping's ranges, missing values, tuples inside the ranges that
the mapping lacks, negative values and several integer types: the files written through the
packed key hold the same rows and values as pandas' labelling (no packed key there).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privwatch.engines import _label, label_records
from privwatch.engines._packed import packed_key

duckdb = pytest.importorskip("duckdb")


def _records(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": g.integers(-3, 6, n).astype(np.int16),
            "b": g.integers(0, 40, n).astype(np.int64),
            "c": g.integers(0, 4, n).astype(np.int32),
            "s": g.integers(0, 3, n),
        }
    )
    a = frame["a"].astype("Int16")
    a[g.random(n) < 0.05] = pd.NA  # missing values match nothing
    frame["a"] = a
    return frame


def _mapping(records: pd.DataFrame, seed: int, as_objects: bool) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    tuples = records[["a", "b", "c"]].dropna().drop_duplicates().astype(np.int64)
    tuples = tuples[(tuples["b"] < 30) & (g.random(len(tuples)) < 0.8)]  # some records: none
    tuples = tuples.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    if as_objects:  # as the engine route's count table holds them: Python ints
        tuples = tuples.astype(object)
    out = tuples.copy()
    out["release_a"] = tuples["a"].astype(str)
    out["release_b"] = (tuples["b"].astype(np.int64) // 10).astype(str)
    out["release_risk"] = g.random(len(out))
    return out


@pytest.mark.parametrize("as_objects", [False, True])
def test_packed_key_labels_as_the_column_join(
    tmp_path: Path, as_objects: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(4000, 0)
    path = tmp_path / "records.parquet"
    records.to_parquet(path)
    mapping = _mapping(records, 1, as_objects)
    cols = {"record": "privwatch_row", "a": "release_a", "b": "release_b", "risk": "release_risk"}
    types = {"a": "SMALLINT", "b": "BIGINT", "c": "INTEGER"}
    assert packed_key(mapping, ["a", "b", "c"], types) is not None  # the packed path is taken

    def labelled(name: str) -> pd.DataFrame:
        out = tmp_path / name
        label_records(str(path), mapping, ["a", "b", "c"], out=out, engine="duckdb", columns=cols)
        return pd.read_parquet(out).sort_values("record").reset_index(drop=True)

    got = labelled("packed.parquet")
    with monkeypatch.context() as m:  # the join on the columns, as before
        m.setattr(_label, "packed_key", lambda *args: None)
        want = labelled("columns.parquet")
    pd.testing.assert_frame_equal(got, want)
    assert got["risk"].isna().sum() > 100  # records the mapping lacks are labelled missing
    assert got["risk"].notna().sum() > 1000
    by_pandas = label_records(records, mapping, ["a", "b", "c"], engine="pandas", columns=cols)
    assert by_pandas is not None
    assert got["record"].tolist() == by_pandas["record"].tolist()
    np.testing.assert_array_equal(got["risk"].to_numpy(), by_pandas["risk"].to_numpy(float))


def test_packed_key_refused() -> None:
    m = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "f": [1.0, 2.0]})
    types = {"a": "INTEGER", "b": "VARCHAR", "f": "DOUBLE"}
    assert packed_key(m, ["a"], types) is not None
    assert packed_key(m, ["a", "b"], types) is None  # a string key
    assert packed_key(m, ["f"], {"f": "INTEGER"}) is None  # a float key in the mapping
    assert packed_key(m, ["a"], {"a": "DOUBLE"}) is None  # records not of an integer type
    assert packed_key(m, ["a"], {"a": "UBIGINT"}) is None  # may not fit a BIGINT
    big = pd.DataFrame({"a": [0, 2**40], "b": [0, 2**40]})
    assert packed_key(big, ["a", "b"], {"a": "BIGINT", "b": "BIGINT"}) is None  # range
