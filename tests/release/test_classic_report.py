"""classic_report: the group-by, per-attribute measures, thresholds and bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from privwatch import measures as m
from privwatch.exceptions import ValidationError
from privwatch.release import CLASSIC_THRESHOLDS, classic_counts, classic_report

# Textbook 4-anonymous table: classes (13*, <30), (148*, >=40), (130*, 3*) of 4, 4, 4 records.
FRAME = pd.DataFrame(
    {
        "zip": ["130**"] * 4 + ["1485*"] * 4 + ["130**"] * 4,
        "age": ["<30"] * 4 + [">=40"] * 4 + ["3*"] * 4,
        "nationality": ["*"] * 12,
        "condition": ("heart heart viral viral cancer heart viral viral " + "cancer " * 4).split(),
        "salary": [3, 4, 5, 6, 11, 8, 7, 9, 10, 3, 4, 5],
    }
)
QIS = ["zip", "age", "nationality"]


def test_counts_follow_the_classes() -> None:
    counts = classic_counts(FRAME, QIS, "condition")
    assert counts.shape == (3, 3)
    assert sorted(map(tuple, np.sort(counts, axis=1))) == [(0, 0, 4), (0, 2, 2), (1, 1, 2)]
    ordered = classic_counts(FRAME, QIS, "salary", ordered=True)
    assert ordered.shape == (3, 9)  # nine distinct salaries, columns in increasing order
    assert ordered[0].tolist() == [1, 1, 1, 1, 0, 0, 0, 0, 0]  # 3, 4, 5, 6


def test_report_matches_the_kernels() -> None:
    r = classic_report(FRAME, QIS, ["condition", "salary"])
    assert r.n_records == 12 and r.n_classes == 3
    assert r.table["k_anonymity"] == 4
    assert r.table["prosecutor_risk_max"] == pytest.approx(0.25)
    assert r.table["prosecutor_risk_mean"] == pytest.approx(3 / 12)
    cond = classic_counts(FRAME, QIS, "condition")
    sal = classic_counts(FRAME, QIS, "salary", ordered=True)
    assert r.sensitive["condition"]["t_closeness"] == pytest.approx(m.t_closeness(cond))
    assert r.ordered == {"condition": False, "salary": True}
    assert r.sensitive["salary"]["t_closeness"] == pytest.approx(
        m.t_closeness(sal, values=np.arange(9))
    )
    # class 3 holds only cancer: 1-diverse, and delta is infinite (heart is ruled out)
    assert r.sensitive["condition"]["distinct_l_diversity"] == 1
    assert r.sensitive["condition"]["delta_disclosure"] == math.inf
    # cancer: p = 5/12, q = 1 in class 3: gain 7/5
    assert r.sensitive["condition"]["basic_beta_likeness"] == pytest.approx(1.4)


def test_numeric_sensitive_overrides_the_dtype() -> None:
    r = classic_report(FRAME, QIS, ["condition", "salary"], numeric_sensitive=[])
    assert r.ordered == {"condition": False, "salary": False}
    sal = classic_counts(FRAME, QIS, "salary")
    assert r.sensitive["salary"]["t_closeness"] == pytest.approx(m.t_closeness(sal))
    cat = FRAME.assign(
        condition=pd.Categorical(FRAME["condition"], ["viral", "heart", "cancer"], ordered=True)
    )
    ordinal = classic_report(cat, QIS, "condition")
    assert ordinal.ordered == {"condition": True}
    counts = classic_counts(cat, QIS, "condition", ordered=True)
    assert ordinal.sensitive["condition"]["t_closeness"] == pytest.approx(
        m.t_closeness(counts, values=[0, 1, 2])
    )


def test_to_dict_and_thresholds() -> None:
    r = classic_report(FRAME, QIS, "condition", thresholds={"k_anonymity": 3})
    d = r.to_dict()
    assert d["table"]["k_anonymity"] == {
        "value": 4,
        "threshold": 3,
        "rule": ">=",
        "passes": True,
        "reference": CLASSIC_THRESHOLDS["k_anonymity"][2],
    }
    cond = d["sensitive"]["condition"]
    assert cond["t_closeness_distance"] == "equal" and cond["n_values"] == 3
    assert cond["measures"]["distinct_l_diversity"]["passes"] is False
    assert cond["measures"]["delta_disclosure"]["value"] == math.inf
    assert set(cond["measures"]) == set(CLASSIC_THRESHOLDS) - set(d["table"])
    assert r.passes("k_anonymity") and not r.passes("t_closeness", "condition")


def test_missing_quasi_identifier_values_form_a_class() -> None:
    frame = pd.DataFrame({"a": [1.0, np.nan, np.nan, 1.0], "s": ["x", "y", "x", "y"]})
    assert classic_report(frame, "a", "s").n_classes == 2


def test_thirty_thousand_rows_quickly() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"q{i}": rng.integers(0, 4, 30_000) for i in range(6)})
    frame["s"] = rng.integers(0, 5, 30_000)
    r = classic_report(frame, [f"q{i}" for i in range(6)], "s")
    assert r.n_classes == len(frame.drop_duplicates([f"q{i}" for i in range(6)]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"frame": [[1]]}, "`frame` must be a pandas DataFrame; got list."),
        ({"frame": FRAME.iloc[:0]}, "`frame` must have at least one row; got an empty frame."),
        ({"quasi_identifiers": []}, "`quasi_identifiers` must name at least one column; got []."),
        ({"quasi_identifiers": ["zipp"]}, "`quasi_identifiers` must name columns of `frame`; got"),
        ({"sensitive": "zip"}, "`sensitive` must not repeat a quasi-identifier; got 'zip'"),
        (
            {"numeric_sensitive": ["age"]},
            "`numeric_sensitive` must be a subset of `sensitive`; got 'age'.",
        ),
        (
            {"thresholds": {"k": 3}},
            "`thresholds` must use the names [",
        ),
        (
            {"thresholds": {"t_closeness": "0.2"}},
            "`thresholds['t_closeness']` must be a non-negative finite number; got '0.2'.",
        ),
        (
            {"frame": FRAME.assign(condition=pd.Series([None] + ["x"] * 11, dtype=object))},
            "`frame` must have no missing values in sensitive column 'condition'; got 1 missing.",
        ),
    ],
)
def test_bad_inputs(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "frame": FRAME,
        "quasi_identifiers": QIS,
        "sensitive": "condition",
    }
    args.update(kwargs)
    with pytest.raises(ValidationError) as err:
        classic_report(**args)  # type: ignore[arg-type]
    assert message in str(err.value)


def test_ordered_text_column_is_refused() -> None:
    with pytest.raises(ValidationError, match="numeric or ordered categorical columns; got "):
        classic_report(FRAME, QIS, "condition", numeric_sensitive=["condition"])
