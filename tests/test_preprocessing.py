from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privwatch import ValidationError, bin_columns
from privwatch.preprocessing import ObservedEncoder, check_discrete, parse_bins


def test_bin_edges_open_ends_keep_every_value() -> None:
    df = pd.DataFrame({"v": [-5.0, 0.0, 1.0, 9.0, 100.0]})
    out = bin_columns(df, {"v": [0, 10]})
    assert out["v"].tolist() == ["<0", "[0, 10)", "[0, 10)", "[0, 10)", ">=10"]
    assert df["v"].tolist()[0] == -5.0  # input untouched


def test_bin_quantiles() -> None:
    df = pd.DataFrame({"v": np.arange(1000)})
    counts = bin_columns(df, {"v": 4})["v"].value_counts()
    assert len(counts) == 4
    assert counts.min() >= 240


@pytest.mark.parametrize(
    ("spec", "pattern"),
    [
        ({"v": 1}, "at least 2"),
        ({"v": [3, 1]}, "strictly increasing"),
        ({"w": 3}, "`columns`"),
        ({"v": "x"}, "must be an int or a sequence"),
    ],
)
def test_bad_bins(spec, pattern) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError, match=pattern):
        bin_columns(pd.DataFrame({"v": [1.0, 2.0]}), spec)


def test_bins_on_text_column_refused() -> None:
    with pytest.raises(ValidationError, match="needs a numeric column; got non-numeric value 'a'"):
        bin_columns(pd.DataFrame({"v": ["a", "b"]}), {"v": 2})


def test_parse_bins() -> None:
    assert parse_bins(["a=3", "b=1.5,2"]) == {"a": 3, "b": [1.5, 2.0]}
    for bad in ["a", "=3", "a=", "a=x"]:
        with pytest.raises(ValidationError, match="`bins` must look like"):
            parse_bins([bad])


def test_check_discrete_names_every_offender() -> None:
    df = pd.DataFrame({"a": np.arange(60), "b": np.arange(60) / 7, "c": ["x"] * 60})
    with pytest.raises(ValidationError, match=r"'a' \(60 distinct values\), 'b' \(60 distinct"):
        check_discrete(df, ["a", "b", "c"])
    check_discrete(df, ["a", "b", "c"], max_levels=None)


def test_encoder_maps_unseen_to_minus_one() -> None:
    train = pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 1, 2]})
    enc = ObservedEncoder(["a", "b"])
    codes = enc.fit_transform(train)
    assert codes.tolist() == [0, 2, 1]
    assert enc.labels() == [("x", 1), ("x", 2), ("y", 1)]
    test = pd.DataFrame({"a": ["y", "z", "y"], "b": [1, 1, 2]})
    assert enc.transform(test).tolist() == [2, -1, -1]
