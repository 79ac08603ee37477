"""release.Generalisation: the fitted generalisation as a FiniteMechanism, saved and applied."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch._serialization import write_model
from privwatch.estimators import PluginLift
from privwatch.exceptions import TamperedFileError, ValidationError
from privwatch.mechanisms import FiniteMechanism, Privacy
from privwatch.preprocessing import bin_columns
from privwatch.release import (
    MECHANISM_FORMAT,
    AppliedRelease,
    Generalisation,
    apply_mechanism,
    find_release,
    load_mechanism,
)

DATA = Path(__file__).parent / "data"
#: Written by report.save_mechanism at commit e9105e3 (data/make_generalisation_v1.py).
OLD_FILE = DATA / "generalisation_v1.json"
#: That file's release of batch() by report.apply_mechanism at the same commit.
OLD_BATCH = DATA / "generalisation_v1_batch.csv"


def batch() -> pd.DataFrame:
    """The batch of data/make_generalisation_v1.py: seen tuples, an unseen value, missing."""
    return pd.DataFrame(
        {
            "a": ["high", "low", "low", "medium", None, "high"],
            "b": ["p", "q", "r", "p", "q", "r"],
            "age": [20.0, 45.0, 79.0, 30.0, 50.0, np.nan],
        }
    )


def small() -> Generalisation:
    return Generalisation(
        ["a", "b"],
        [["x", "1"], ["y", "1"], ["x", "2"], ["z", "2"]],
        [["x", "*"], ["*", "*"], ["x", "*"], ["z", "2"]],
        sensitive="s",
        epsilon=0.5,
        disclosure="positive",
        method="local",
        status="not_met",
    )


def fit_frame(n: int = 500, seed: int = 1) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    s = g.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.where(s == 1, "yes", "no"),
            "a": np.where(g.random(n) < 0.3 + 0.4 * s, "high", "low"),
            "b": g.integers(0, 3, n),
            "age": g.integers(18, 90, n),
        }
    )


@pytest.fixture(scope="module")
def fitted() -> tuple[Generalisation, pd.DataFrame, pd.DataFrame]:
    """(generalisation, raw fit frame, the search's release of it)."""
    df = fit_frame()
    bins = {"age": [40.0, 65.0]}
    binned = bin_columns(df, bins)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = find_release(binned, "s", ["a", "b", "age"], epsilon=0.3, folds=0)
    g = Generalisation.from_release(
        found, sensitive="s", observed=["a", "b", "age"], bins={**bins, "s": 2}
    )
    return g, df, found.released


def test_is_a_deterministic_finite_mechanism() -> None:
    g = small()
    assert isinstance(g, FiniteMechanism)
    k = g.channel()
    assert k.shape == (5, 3) and set(np.unique(k)) == {0.0, 1.0}
    assert np.array_equal(k.sum(axis=1), np.ones(5))
    codes = np.arange(5)
    assert np.array_equal(g.release(codes), k.argmax(axis=1))
    assert np.array_equal(g.release(codes, rng=1), g.release(codes, rng=2))
    # outputs: distinct released tuples in order of first appearance; '*' already among them
    assert g.output_tuples == [("x", "*"), ("*", "*"), ("z", "2")]
    assert g.unseen_code == 4 and g.release([4]).tolist() == [1]
    assert g.privacy == Privacy("positive_lift_epsilon", 0.5, True)
    with pytest.raises(ValidationError, match="`observed` must be a 1-d array of integer codes"):
        g.release([5])


def test_channel_codes_agree_with_encode_and_decode() -> None:
    g = small()
    df = pd.DataFrame({"a": ["z", "x", "q", "y"], "b": [2, "2", "1", 1]})
    codes = g.encode(df)
    assert codes.tolist() == [3, 2, 4, 1]  # ints and text of a fitted value match alike
    released = g.decode(g.release(codes))
    assert released.to_numpy().tolist() == [["z", "2"], ["x", "*"], ["*", "*"], ["*", "*"]]
    out = g.apply(df)
    assert isinstance(out, AppliedRelease)
    pd.testing.assert_frame_equal(out.released, released)
    assert out.unseen.tolist() == [False, False, True, False] and out.n_unseen == 1
    assert out.input_rows.tolist() == [0, 1, 2, 3]


def test_unseen_and_missing_tuples_are_suppressed_and_counted() -> None:
    g = Generalisation(
        ["a"], [["p"], ["q"]], [["p"], ["q"]], sensitive="s", epsilon=1.0, method="global",
        status="met",
    )  # fmt: skip
    # no fitted tuple is released as '*': the suppressed cell is the last output
    assert g.output_tuples == [("p",), ("q",), ("*",)]
    assert g.channel()[g.unseen_code].tolist() == [0.0, 0.0, 1.0]
    out = g.apply(pd.DataFrame({"a": ["q", "r", None, "p"]}, index=[10, 11, 12, 13]))
    assert out.released["a"].tolist() == ["q", "*", "*", "p"]
    assert out.unseen.tolist() == [False, True, True, False] and out.n_unseen == 2
    assert out.input_rows.tolist() == [0, 1, 2, 3]
    with pytest.raises(
        ValidationError, match=r"observed columns of the mechanism; missing \['a'\]"
    ):
        g.apply(pd.DataFrame({"b": [1]}))


def test_a_missing_value_does_not_change_the_other_records() -> None:
    # a float column with a missing value: the other records are looked up as without it
    # (earlier code wrote them as '1.0' then, which the fitted '1' did not match)
    g = Generalisation(
        ["a", "f"], [["x", "1"], ["y", "2"]], [["x", "*"], ["*", "2"]], sensitive="s",
        epsilon=1.0, method="local", status="met",
    )  # fmt: skip
    full = pd.DataFrame({"a": ["x", "y", "x"], "f": [1.0, 2.0, 1.0]})
    holed = full.assign(f=[1.0, 2.0, np.nan])
    assert g.encode(full).tolist() == [0, 1, 0]
    assert g.encode(holed).tolist() == [0, 1, g.unseen_code]
    out = g.apply(holed)
    assert out.released.to_numpy().tolist() == [["x", "*"], ["*", "2"], ["*", "*"]]
    assert out.n_unseen == 1


def test_a_file_saved_by_the_earlier_code_loads_and_applies_identically(tmp_path: Path) -> None:
    g = Generalisation.load(OLD_FILE)
    assert (g.observed, g.sensitive, g.method, g.status) == (("a", "b", "age"), "s", "local", "met")
    assert g.epsilon == 0.4 and g.disclosure == "both" and list(g.bins) == ["age"]
    want = pd.read_csv(OLD_BATCH, dtype=str, keep_default_na=False)
    out = g.apply(batch())
    got = out.released.astype(str).assign(unseen=out.unseen.astype(str))
    pd.testing.assert_frame_equal(got, want)
    assert out.n_unseen == 3 and got["a"].iloc[:3].tolist() == ["*"] * 3  # seen, generalised
    assert got.to_numpy()[0].tolist() == ["*", "p", "<39", "False"]
    # written again, it is the same file, byte for byte: the format did not change
    assert g.save(tmp_path / "again.json").read_bytes() == OLD_FILE.read_bytes()
    assert apply_mechanism(load_mechanism(OLD_FILE), batch()).released.equals(out.released)


def test_fit_release_round_trip(
    fitted: tuple[Generalisation, pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    g, df, released = fitted
    assert g.bins == {"age": [40.0, 65.0]}  # bins of other columns are dropped
    out = g.apply(df)
    assert out.n_unseen == 0
    pd.testing.assert_frame_equal(out.released.astype(str), released[["a", "b", "age"]].astype(str))
    path = g.save(tmp_path / "g.json")
    doc = json.loads(path.read_text())
    assert doc["kind"] == "Generalisation" and doc["state"]["format"] == MECHANISM_FORMAT
    assert doc["state"]["version"] == 1 and not doc["arrays"]
    back = Generalisation.load(path)
    assert back.to_state() == g.to_state()
    assert np.array_equal(back.channel(), g.channel())
    pd.testing.assert_frame_equal(back.apply(df).released, out.released)
    assert not list(tmp_path.glob("*.tmp"))


def test_save_is_the_state_of_to_state(tmp_path: Path) -> None:
    g = small()
    state = json.loads(g.save(tmp_path / "s.json").read_text())["state"]
    assert state == g.to_state()
    assert state["input"] == {"sha256": None, "name": None}
    assert state["unseen_rule"] == Generalisation.unseen_rule


def _forge(tmp_path: Path, **changes: object) -> Path:
    """A file with a valid digest whose state has ``changes``."""
    state = {**small().to_state(), **changes}
    path = tmp_path / "forged.json"
    write_model(path, "Generalisation", state, {})
    return path


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"tuples": [["x", "1"], ["x", "1"], ["x", "2"], ["z", "2"]]}, "`tuples` must be distinct"),
        ({"released": [["x", "*"]]}, "one row per row of `tuples`"),
        ({"tuples": [["x"], ["y"], ["x"], ["z"]]}, "rows of 2 values"),
        ({"bins": {"b": [3.0, 1.0]}}, "increasing finite cut points"),
        ({"bins": {"c": 3}}, "`bins` must map observed columns"),
        ({"epsilon": -1.0}, "`epsilon` must be a non-negative finite number"),
        ({"epsilon": True}, "`epsilon` must be a non-negative finite number"),
        ({"disclosure": "negative"}, "`disclosure` must be one of"),
        ({"status": "ok"}, "`status` must be one of"),
        ({"unseen_rule": "release as is"}, "unseen_rule"),
        ({"version": 2}, "version 2"),
        ({"input": {"name": "x"}}, "input must be"),
        ({"observed": ["a", "a"]}, "distinct column names"),
        ({"sensitive": ["s"]}, "`sensitive` must be non-empty text"),
    ],
)
def test_a_forged_state_is_refused_as_tampered(
    tmp_path: Path, changes: dict[str, object], why: str
) -> None:
    with pytest.raises(TamperedFileError, match="intact privwatch model file") as info:
        Generalisation.load(_forge(tmp_path, **changes))
    assert why in str(info.value)


def test_a_tampered_or_foreign_file_is_refused(tmp_path: Path) -> None:
    text = OLD_FILE.read_text()
    tampered = tmp_path / "t.json"
    tampered.write_text(text.replace('"epsilon": 0.4', '"epsilon": 4.0'))
    with pytest.raises(TamperedFileError, match="SHA-256 of the state does not match"):
        Generalisation.load(tampered)
    missing_key = json.loads(text)
    del missing_key["state"]["method"]
    write_model(tampered, "Generalisation", missing_key["state"], {})
    with pytest.raises(TamperedFileError, match="KeyError"):
        Generalisation.load(tampered)
    X = pd.DataFrame({"a": [0, 1, 0, 1]})
    PluginLift().fit(X, [0, 1, 1, 0]).save(tmp_path / "p.json")
    with pytest.raises(TamperedFileError, match="not a Generalisation"):
        Generalisation.load(tmp_path / "p.json")
    with pytest.raises(TamperedFileError, match="not UTF-8 JSON"):
        Generalisation.load(OLD_BATCH)
    with pytest.raises(ValidationError, match="`path` must be a readable model file"):
        Generalisation.load(tmp_path / "none.json")


def test_constructor_names_the_bad_parameter() -> None:
    base: dict[str, Any] = {"sensitive": "s", "epsilon": 1.0, "method": "global", "status": "met"}
    with pytest.raises(ValidationError, match="`observed` must be a non-empty list"):
        Generalisation("a", [["p"]], [["p"]], **base)
    with pytest.raises(ValidationError, match="`released` must be a non-empty list of rows"):
        Generalisation(["a"], [["p"]], [[None]], **base)
    with pytest.raises(ValidationError, match=r"`bins\['a'\]` must be increasing"):
        Generalisation(["a"], [["p"]], [["p"]], bins={"a": 1}, **base)
    with pytest.raises(ValidationError, match="`input_sha256` must be text or None"):
        Generalisation(["a"], [["p"]], [["p"]], input_sha256=3, **base)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`mechanism` must be a Generalisation"):
        apply_mechanism({"observed": ["a"]}, pd.DataFrame({"a": [1]}))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`df` must be a pandas DataFrame"):
        small().apply({"a": [1]})  # type: ignore[arg-type]
