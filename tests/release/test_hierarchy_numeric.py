"""Hierarchies of numeric columns: values matched by number, automatic nested intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privwatch.exceptions import ValidationError
from privwatch.preprocessing import bin_columns
from privwatch.release import SUPPRESSED, Hierarchy, find_release
from privwatch.release.hierarchies import AUTO_INTERVALS, nested_intervals

PRIORS = "0;0;0;*\n1;1-3;1+;*\n2;1-3;1+;*\n3;1-3;1+;*\n4;4+;1+;*\n5;4+;1+;*\n"


def _file(tmp_path: Path, text: str, name: str = "h.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_file_values_match_ints_and_floats(tmp_path: Path) -> None:
    h = Hierarchy.from_file(_file(tmp_path, PRIORS), "priors")
    as_int = h.codes(pd.Series([3, 0, 5]))
    as_float = h.codes(pd.Series([3.0, 0.0, 5.0]))
    np.testing.assert_array_equal(as_int, [3, 0, 5])
    np.testing.assert_array_equal(as_float, as_int)
    # object column of Python numbers (an engine's count table)
    np.testing.assert_array_equal(h.codes(pd.Series([3, 0.0, 5], dtype=object)), as_int)


def test_float_column_read_with_a_missing_value_matches(tmp_path: Path) -> None:
    h = Hierarchy.from_file(_file(tmp_path, PRIORS), "priors")
    column = pd.Series([1, None, 4, 2]).dropna()  # float64 with integral values
    assert column.dtype == float
    np.testing.assert_array_equal(h.codes(column), [1, 4, 2])


def test_file_written_with_decimals_matches_ints(tmp_path: Path) -> None:
    h = Hierarchy.from_file(_file(tmp_path, "1.0;low;*\n2.50;low;*\n10;high;*\n"), "x")
    np.testing.assert_array_equal(h.codes(pd.Series([10, 1, 10])), [2, 0, 2])
    # a float column holding a non-integral value reads "10.0", not "10": matched by number
    np.testing.assert_array_equal(h.codes(pd.Series([2.5, 1.0, 10.0])), [1, 0, 2])


def test_text_columns_are_not_matched_by_number(tmp_path: Path) -> None:
    h = Hierarchy.from_file(_file(tmp_path, "3;a;*\n4;a;*\n"), "zip")
    with pytest.raises(ValidationError, match=r"must list every value .*'03'"):
        h.codes(pd.Series(["03", "4"]))


def test_a_value_the_file_lacks_is_still_an_error(tmp_path: Path) -> None:
    h = Hierarchy.from_file(_file(tmp_path, PRIORS), "priors")
    with pytest.raises(ValidationError, match=r"hierarchy of 'priors' must list .*'7'"):
        h.codes(pd.Series([1, 7]))
    with pytest.raises(ValidationError, match=r"missing \['3.5'\]"):
        h.codes(pd.Series([1.0, 3.5]))


def test_search_accepts_a_float_column_with_an_int_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 600
    s = rng.integers(0, 2, n)
    priors = np.minimum(rng.poisson(1 + s), 5).astype(float)  # read as float
    frame = pd.DataFrame({"s": s.astype(str), "priors": priors})
    found = find_release(
        frame, "s", ["priors"], epsilon=2.0, folds=0,
        hierarchies={"priors": _file(tmp_path, PRIORS)},
    )  # fmt: skip
    labels = set(found.released["priors"])
    assert labels <= {"0", "1", "2", "3", "4", "5", "1-3", "4+", "1+", SUPPRESSED}
    assert found.information_nats > 0 and labels - {SUPPRESSED}


def test_nested_intervals_halve_and_nest() -> None:
    rng = np.random.default_rng(1)
    values = pd.Series(rng.normal(40, 12, 5000).round(1))
    edges, h = nested_intervals(values, "age")
    sizes = [len(set(level)) for level in h.labels]
    assert sizes == [AUTO_INTERVALS, 8, 4, 2, 1]
    assert h.labels[-1] == (SUPPRESSED,) * len(h.values)
    assert len(edges) == AUTO_INTERVALS - 1 and np.all(np.diff(edges) > 0)
    assert set(edges) <= set(values)  # cut points are values of the column
    # level 0 is exactly what bin_columns writes for these cut points
    binned = bin_columns(pd.DataFrame({"age": values}), {"age": edges})["age"].astype(str)
    assert set(binned) == set(h.values)
    codes = h.codes(binned)
    # quantile intervals: each of the 16 holds about 1/16 of the records
    shares = np.bincount(codes, minlength=len(h.values)) / len(values)
    assert shares.min() > 0.04 and shares.max() < 0.09
    # nesting: every interval of a level lies within one interval of the next
    for finer, coarser in zip(h.labels, h.labels[1:], strict=False):
        parent: dict[str, str] = {}
        for a, b in zip(finer, coarser, strict=True):
            assert parent.setdefault(a, b) == b
    assert "[" in h.values[1] and h.values[0].startswith("<") and h.values[-1].startswith(">=")
    assert h.origin.startswith("automatic")


def test_nested_intervals_of_tied_values_drop_empty_levels() -> None:
    values = pd.Series([0] * 900 + list(range(1, 101)))
    edges, h = nested_intervals(values, "priors")
    sizes = [len(set(level)) for level in h.labels]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    assert edges[0] == 1.0  # the 90 % at zero are one interval
    assert h.values[0] == "<1"


def test_nested_intervals_weights_and_missing_label() -> None:
    values = pd.Series([1.0, 2.0, 3.0, 4.0, np.nan])
    assert nested_intervals(values, "x", n_intervals=2)[0] == [3.0]
    weights = np.array([97, 1, 1, 1, 5], dtype=float)
    edges, h = nested_intervals(values, "x", n_intervals=2, weights=weights, missing_label="?")
    assert edges == [2.0]  # the cut follows the weighted median, 1
    assert h.values == ("<2", ">=2", "?")
    assert h.labels[0][-1] == "?" and h.labels[-1][-1] == SUPPRESSED
