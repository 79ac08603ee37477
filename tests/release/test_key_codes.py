"""A count table factorised once (KeyCodes) gives every reader the codes it computed itself.

Each reader (the count table and hierarchies of the search, the engine route's joint, the
re-identification classes) is run with and without the shared factorisation, on tables of
Python ints (the engine's count table), numpy ints, strings, floats, booleans, mixed objects
and missing values: the arrays must be equal, element for element.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch.audit._engine_codes import codes_with, distinct_tuples, released_codes, value_shares
from privwatch.audit._engine_codes import table_codes as _codes
from privwatch.audit._reidentification import _class_ids
from privwatch.release.cells import CountTable
from privwatch.release.hierarchies import KeyCodes, build_hierarchies
from privwatch.release.search import SearchOptions
from privwatch.release.search._counting import count_space


def _reference_codes(frame: pd.DataFrame, columns: list[str], raw: list[bool]) -> np.ndarray:
    """The engine route's loop before KeyCodes: renumber after every column."""
    code = np.zeros(len(frame), dtype=np.int64)
    for c, as_is in zip(columns, raw, strict=True):
        col = frame[c]
        part, uniques = pd.factorize(col if as_is else col.astype(str))
        code = pd.factorize(code * max(len(uniques), 1) + part)[0].astype(np.int64)
    return code


def _table(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": pd.Series(g.integers(-3, 12, n).tolist(), dtype=object),  # Python ints
            "b": g.integers(0, 5, n),  # numpy ints
            "c": pd.Series(g.choice(["x", "y", "zz", "10", "9"], n).tolist(), dtype=object),
            "f": g.choice([0.0, -0.0, 1.5, 2.0], n),
            "t": g.choice([True, False], n),
            "m": pd.Series(g.choice([1, "1", 2.0, "b"], n).tolist(), dtype=object),
            "s": pd.Series(g.integers(0, 11, n).tolist(), dtype=object),
            "s2": g.integers(-2, 3, n),
            "count": g.integers(1, 9, n),
        }
    )
    frame["fold"] = g.integers(0, 3, n)
    return frame


@pytest.mark.parametrize("seed", [0, 1])
def test_tuple_codes_are_the_loops(seed: int) -> None:
    frame = _table(3000, seed)
    na = frame.copy()
    na.loc[::7, "c"] = None  # a missing value's -1 code takes the loop, as before
    na.loc[::11, "f"] = np.nan
    for table in (frame, na):
        keys = KeyCodes(table)
        for cols in (["a"], ["a", "b", "c"], ["f", "t", "m", "c"], ["s", "s2", "a", "b"]):
            alternate = [i % 2 == 0 for i in range(len(cols))]
            for raw in ([True] * len(cols), [False] * len(cols), alternate):
                got = keys.tuple_codes(cols, raw)
                np.testing.assert_array_equal(got, _reference_codes(table, cols, raw))


def test_engine_codes_and_reid_classes_with_keys() -> None:
    frame = _table(2000, 3)
    keys = KeyCodes(frame)
    cols = ["a", "b", "c", "f", "t", "m"]
    for i in range(1, len(cols) + 1):
        np.testing.assert_array_equal(_codes(frame, cols[:i], keys), _codes(frame, cols[:i]))
    counts = frame["count"].to_numpy(dtype=float)
    sub = frame[cols].reset_index(drop=True)  # reid_section's view: the same memory
    got, f_got = _class_ids(sub, cols, counts, keys)
    want, f_want = _class_ids(sub, cols, counts)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(f_got, f_want)
    # keys of another frame are not used for this one
    other = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    got, _ = _class_ids(other[cols], cols, counts, keys)
    np.testing.assert_array_equal(got, _class_ids(other[cols], cols, counts)[0])


@pytest.mark.parametrize("sensitive", [["s"], ["s2"], ["s", "s2"], ["c"], ["s", "c"]])
def test_count_table_with_keys(sensitive: list[str]) -> None:
    frame = _table(4000, 5)
    observed = ["a", "b", "c"]
    folds = frame["fold"].to_numpy()
    weights = frame["count"].to_numpy(dtype=float)
    keys = KeyCodes(frame)
    h_keys = build_hierarchies(frame, observed, weights=weights, keys=keys)
    h_plain = build_hierarchies(frame, observed, weights=weights)
    assert h_keys == h_plain
    args = {"folds": folds, "n_folds": 3, "weights": weights}
    t_keys, row_keys = CountTable.from_frame(frame, sensitive, observed, h_keys, **args, keys=keys)
    t_plain, row_plain = CountTable.from_frame(frame, sensitive, observed, h_plain, **args)
    np.testing.assert_array_equal(row_keys, row_plain)
    np.testing.assert_array_equal(t_keys.codes, t_plain.codes)
    np.testing.assert_array_equal(t_keys.counts, t_plain.counts)
    assert t_keys.sensitive_values == t_plain.sensitive_values
    assert len(t_plain.sensitive_values) > 1


def test_count_space_with_keys() -> None:
    frame = _table(3000, 7)
    options = SearchOptions(epsilon=0.5)
    args = (["s"], ["a", "b"], None, options, 3, "count", 0)
    space_k, row_k = count_space(frame, *args, keys=KeyCodes(frame))
    space_p, row_p = count_space(frame, *args)
    np.testing.assert_array_equal(row_k, row_p)
    np.testing.assert_array_equal(space_k.table.counts, space_p.table.counts)
    assert space_k.hierarchies == space_p.hierarchies
    np.testing.assert_array_equal(space_k.table.codes, space_p.table.codes)
    # keys of another frame are ignored
    _, row_o = count_space(frame, *args, keys=KeyCodes(frame.copy()))
    np.testing.assert_array_equal(row_o, row_p)


def test_summary_and_lift_codes_with_keys() -> None:
    """The mapping's tuples among the table's, the distinct tuples and the value shares."""
    frame = _table(3000, 9)
    keys = KeyCodes(frame)
    obs = ["a", "b", "s2"]
    g = np.random.default_rng(1)
    # the mapping: the table's tuples in another order, numpy ints, and two it lacks
    mapping = frame[obs].drop_duplicates().sample(frac=1.0, random_state=2)
    mapping = pd.concat(
        [mapping, pd.DataFrame({"a": [99, 99], "b": [0, 0], "s2": [7, 7]})], ignore_index=True
    ).astype({"a": np.int64})
    mapping = mapping.iloc[g.permutation(len(mapping))].reset_index(drop=True)
    got = codes_with(frame, mapping, obs, keys)
    assert got is not None
    both = _codes(pd.concat([frame[obs], mapping[obs]], ignore_index=True), obs)
    np.testing.assert_array_equal(np.concatenate(got), both)
    assert codes_with(frame, mapping.astype({"b": float}), obs, keys) is None  # not all ints
    assert distinct_tuples(frame, obs, keys) == len(frame[obs].drop_duplicates())
    weight = frame["count"].to_numpy(dtype=float)
    for sens in (["s"], ["s2"]):
        want = value_shares(frame, sens, weight, "s")
        pd.testing.assert_series_equal(value_shares(frame, sens, weight, "s", keys), want)
        assert list(want.index) != sorted(want.index)  # largest first, not by text


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factorized_object_integers_are_pandas(seed: int) -> None:
    """An object column of integers is factorised through a table of its range: the same codes
    and the column's own objects as distinct values (Python and numpy ints mixed), and
    pandas' hashing where the range is wide or a value does not fit in int64."""
    g = np.random.default_rng(seed)
    n = 5000
    small = g.integers(-40, 60, n)
    mixed = [np.int64(v) if i % 3 else int(v) for i, v in enumerate(small)]
    frame = pd.DataFrame(
        {
            "small": pd.Series(small.tolist(), dtype=object),
            "mixed": pd.Series(mixed, dtype=object),
            "wide": pd.Series((g.integers(0, 50, n) * 10**12).tolist(), dtype=object),
            "huge": pd.Series([*g.integers(0, 9, n - 1).tolist(), 2**70], dtype=object),
        }
    )
    keys = KeyCodes(frame)
    for c in frame.columns:
        codes, uniques = keys.factorized(c)
        want_codes, want_uniques = pd.factorize(frame[c])
        assert codes.dtype == np.int64
        np.testing.assert_array_equal(codes, want_codes)
        assert [type(u) for u in uniques] == [type(u) for u in want_uniques]
        assert list(uniques) == list(want_uniques)


def test_arrow_columns_held_across_copies() -> None:
    """A text column backed by Arrow holds in a copy that shares its array (``reset_index``,
    a column selection: the release read by the joint and the re-identification classes), and
    not in a frame with other values."""
    frame = pd.DataFrame({"a": pd.Series(["x", "y", "x"], dtype="str"), "b": [1, 2, 3]})
    keys = KeyCodes(frame)
    assert keys.holds("a", frame[["a", "b"]].reset_index(drop=True)["a"])
    assert not keys.holds("a", pd.Series(["x", "y", "x"], dtype="str"))
    assert not keys.holds("a", pd.Series(["y", "y", "x"], dtype="str"))


def _release_of(frame: pd.DataFrame, obs: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A release as the search writes it: a mapping (each observed tuple once, its released
    texts: one column coarsened, one suppressed in part) and the rows' released tuples."""
    tuples = frame[obs].drop_duplicates().reset_index(drop=True)
    released = pd.DataFrame(
        {
            obs[0]: (tuples[obs[0]].astype(int) // 4).astype(str),
            obs[1]: np.where(tuples[obs[1]].astype(int) > 2, "*", tuples[obs[1]].astype(str)),
            obs[2]: tuples[obs[2]].astype(str),
        }
    ).astype("str")
    mapping = pd.concat([tuples, released.add_prefix("release_")], axis=1)
    at = pd.MultiIndex.from_frame(tuples).get_indexer(pd.MultiIndex.from_frame(frame[obs]))
    return mapping, released.iloc[at].reset_index(drop=True)


def test_release_codes_from_the_mapping() -> None:
    """The release's tuple codes read off its mapping are the codes of its rows' text; a
    mapping that lacks a tuple or holds one twice gives none."""
    frame = _table(4000, 11)
    obs = ["a", "b", "s"]
    keys = KeyCodes(frame)
    mapping, rows = _release_of(frame, obs)
    coded = KeyCodes(rows)
    got = released_codes(frame, keys, mapping.sample(frac=1.0, random_state=1), coded, obs)
    assert got is not None
    np.testing.assert_array_equal(got, _codes(rows, obs))
    assert released_codes(frame, keys, mapping.iloc[1:], coded, obs) is None
    doubled = pd.concat([mapping, mapping.iloc[:1]], ignore_index=True)
    assert released_codes(frame, keys, doubled, coded, obs) is None
    assert released_codes(frame, keys, mapping.astype({"release_a": object}), coded, obs) is None


def test_engine_route_release_codes_are_its_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the engine route's decide step, the release's codes from its mapping equal the codes
    of the released rows' text (a MET and a strict epsilon)."""
    from privwatch.audit import AuditSpec
    from privwatch.audit import _route_engine as route

    g = np.random.default_rng(4)
    n = 6000
    frame = pd.DataFrame({c: pd.Series(g.integers(0, k, n).tolist(), dtype=object)
                          for c, k in (("x1", 4), ("x2", 5), ("x3", 6), ("s", 3))})  # fmt: skip
    frame["s"] = pd.Series(((frame["x1"] + g.integers(0, 2, n)) % 3).tolist(), dtype=object)
    frame["fold"] = g.integers(0, 3, n)
    frame["count"] = g.integers(1, 30, n)
    frame = frame.groupby(["x1", "x2", "x3", "s", "fold"], as_index=False)["count"].sum()
    frame = frame.astype({c: object for c in ("x1", "x2", "x3", "s")})
    checked: list[bool] = []
    original = route.released_codes

    def spy(counts: Any, keys: Any, mapping: Any, coded: Any, observed: Any) -> Any:
        got = original(counts, keys, mapping, coded, observed)
        want = _codes(coded.frame, observed)
        checked.append(got is not None and bool(np.array_equal(got, want)))
        return got

    monkeypatch.setattr(route, "released_codes", spy)
    obs = ["x1", "x2", "x3"]
    for eps in (1.0, 0.2):
        spec = AuditSpec(sensitive=["s"], observed=obs, epsilon=eps, folds=3, records=False)
        counted = route._Counted(frame, "duckdb", "t", ["s"], obs, spec, {}, frame.iloc[:0])
        route.EngineRoute("duckdb", "t").decide(spec, counted, lambda m: None)
    assert checked == [True, True]
