from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from privwatch import Joint, PrivacyWarning, ValidationError, bin_columns
from privwatch import measures as m


def test_from_matrix_marginals_and_conditionals() -> None:
    j = Joint([[0.1, 0.3], [0.2, 0.4]], sensitive_labels=["a", "b"], observed_labels=["u", "v"])
    assert j.p_sensitive == pytest.approx([0.4, 0.6])
    assert j.p_observed == pytest.approx([0.3, 0.7])
    assert j.observed_given_sensitive() == pytest.approx(np.array([[0.25, 0.75], [1 / 3, 2 / 3]]))
    post = j.sensitive_given_observed()
    assert post.shape == (2, 2)
    assert post.sum(axis=1) == pytest.approx([1, 1])
    assert post[0] == pytest.approx([1 / 3, 2 / 3])
    assert list(j.to_frame().index) == ["a", "b"]


def test_from_samples_counts_and_smoothing() -> None:
    s = ["a", "a", "b", "b", "b", "a"]
    x = [1, 2, 2, 2, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        j = Joint.from_samples(x, s)
        js = Joint.from_samples(x, s, smoothing=1.0)
    assert j.sensitive_labels == ["a", "b"]
    assert j.observed_labels == [1, 2]
    assert j.p == pytest.approx(np.array([[2, 1], [1, 2]]) / 6)
    assert js.p == pytest.approx(np.array([[3, 2], [2, 3]]) / 10)
    assert j.counts is not None and j.counts.sum() == 6


def test_from_frame_tuples_become_symbols() -> None:
    df = pd.DataFrame({"s": [0, 0, 1, 1] * 5, "a": ["x", "y", "x", "y"] * 5, "b": [1, 1, 2, 2] * 5})
    j = Joint.from_frame(df, "s", ["a", "b"])
    assert j.observed_labels == [("x", 1), ("x", 2), ("y", 1), ("y", 2)]
    assert j.p == pytest.approx(np.array([[0.25, 0, 0.25, 0], [0, 0.25, 0, 0.25]]))
    assert j.mutual_information() == pytest.approx(math.log(2))


def test_from_frame_defaults_to_all_other_columns() -> None:
    df = pd.DataFrame({"s": [0, 1] * 10, "a": [0, 1] * 10})
    assert Joint.from_frame(df, "s").observed_name == "a"


def test_through_channel_matches_matrix_product() -> None:
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(6)).reshape(2, 3)
    k = rng.dirichlet(np.ones(4), size=3)
    q = Joint(p).through(k)
    assert q.p == pytest.approx(p @ k)
    assert q.mutual_information() <= m.mutual_information(p) + 1e-12


def test_measure_methods_delegate() -> None:
    p = np.array([[0.4, 0.1], [0.1, 0.4]])
    j = Joint(p)
    assert j.lift_epsilon() == m.lift_epsilon(p)
    assert j.log_lift() == pytest.approx(m.log_lift(p))
    assert j.leakage().mutual_information == pytest.approx(m.mutual_information(p))


def test_sparse_cells_warn() -> None:
    with pytest.warns(PrivacyWarning, match="fewer than 5 samples"):
        Joint.from_samples([1, 2, 3, 4], [0, 1, 0, 1])


def test_bad_inputs() -> None:
    df = pd.DataFrame({"s": [0, 1, 0, 1], "a": [1, 2, 1, np.nan], "age": np.arange(4) * 1.5})
    with pytest.raises(ValidationError, match="`sensitive` must name a column"):
        Joint.from_frame(df, "race")
    with pytest.raises(ValidationError, match=r"`a` must have no missing values; got 1 missing"):
        Joint.from_frame(df, "s", ["a"])
    with pytest.raises(ValidationError, match=r"'age' \(4 distinct values\)"):
        Joint.from_frame(df, "s", ["age"], max_levels=3)
    with pytest.raises(ValidationError, match=r"`columns` must name columns"):
        Joint.from_frame(df, "s", ["zzz"])
    with pytest.raises(ValidationError, match="`sensitive` must take at least two values"):
        Joint.from_frame(pd.DataFrame({"s": [1, 1], "a": [1, 2]}), "s")
    with pytest.raises(ValidationError, match="`smoothing` must be a non-negative"):
        Joint.from_frame(df, "s", ["age"], smoothing=-1)
    with pytest.raises(ValidationError, match="`observed` must not contain the sensitive"):
        Joint.from_frame(df, "s", ["s"])
    with pytest.raises(ValidationError, match="`sensitive` must have as many samples"):
        Joint.from_samples([0, 1], [0])
    with pytest.raises(ValidationError, match="`df` must be a pandas DataFrame"):
        Joint.from_frame({"s": [0]}, "s")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`sensitive_labels` must have 2 entries"):
        Joint([[0.5, 0], [0, 0.5]], sensitive_labels=["a"])
    with pytest.raises(ValidationError, match="`k` must have 2 rows"):
        Joint([[0.5, 0], [0, 0.5]]).through(np.eye(3))


def test_binning_then_joint() -> None:
    df = pd.DataFrame({"s": [0, 1] * 50, "age": np.arange(100)})
    j = Joint.from_frame(bin_columns(df, {"age": 4}), "s", ["age"])
    assert j.shape == (2, 4)
