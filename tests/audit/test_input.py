"""Input an audit accepts when it should, and refuses with one line when it should not.

Numeric columns with a hierarchy file, automatic nested intervals for many-valued numeric
columns, ``missing='drop'`` keeping one output row per input record, several sensitive
columns stored as a list, epsilon 0 or tiny, and the estimators' NaN parameters and
non-finite features. Release searches run without held-out folds (``folds=0``): what is
tested here is the input, not the held-out check.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import privwatch as pw
from privwatch.audit._prepare import resolve_columns
from privwatch.cli import app
from privwatch.estimators import ClassifierLift, DVLift, PluginLift, PosteriorLift
from privwatch.exceptions import ValidationError
from privwatch.preprocessing import DEFAULT_MAX_LEVELS
from privwatch.release import SUPPRESSED
from privwatch.report import write_audit

from ._golden import INPUTS, _bundled_compas

runner = CliRunner()
SHARED = INPUTS / "hierarchies"


def _run(source: Any, **options: Any) -> pw.audit.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pw.audit.run(source=source, folds=0, checks=False, **options)


def _release(result: pw.audit.Audit) -> pd.DataFrame:
    assert result.release is not None
    return result.release


def _data(result: pw.audit.Audit) -> pd.DataFrame:
    assert result.data is not None
    return result.data


def _file_labels(path: Path) -> set[str]:
    rows = [line.split(";") for line in path.read_text().splitlines() if line.strip()]
    return {field.strip() for row in rows for field in row}


@pytest.fixture(scope="module")
def compas() -> pd.DataFrame:
    """The raw COMPAS table the package ships (7,214 records, all six race values)."""
    return pd.read_csv(_bundled_compas())


@pytest.fixture(scope="module")
def age_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("h") / "age.csv"
    rows = [
        f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'<40' if a < 40 else '40+'};*"
        for a in range(10, 101)
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


# ------------------------------------------------------------ a: numeric columns + hierarchy


def test_numeric_columns_with_hierarchy_files_are_accepted(
    compas: pd.DataFrame, age_file: Path
) -> None:
    assert compas["age"].nunique() > DEFAULT_MAX_LEVELS  # refused before: "binned explicitly"
    files = {
        "age": age_file,
        "priors_count": SHARED / "priors_count.csv",
        "decile_score": SHARED / "decile_score.csv",
    }
    result = _run(
        compas, sensitive="race", observed=["sex", "age", "priors_count", "decile_score"],
        epsilon=3.0, hierarchies=files,
    )  # fmt: skip
    assert result.settings["max_levels"] == DEFAULT_MAX_LEVELS
    assert result.settings["bins"] == {}  # nothing binned behind the user's back
    assert set(result.settings["hierarchies"]) == set(files)
    released = _release(result)
    assert result.found is not None and result.found.information_nats > 0
    for col, path in files.items():
        assert set(released[col]) <= _file_labels(path), col
    # a record released at level 0 keeps its own value, as the file writes it
    kept = released["priors_count"] != SUPPRESSED
    own = compas["priors_count"].astype(str).to_numpy()[result.input_rows]
    assert set(released["priors_count"][kept]) - set(own[kept.to_numpy()]) <= {
        "1-3",
        "4-9",
        "10+",
        "1+",
    }


def test_hierarchy_matches_a_column_read_as_float(compas: pd.DataFrame) -> None:
    frame = compas.assign(priors_count=compas["priors_count"].astype(float))
    frame.loc[3, "priors_count"] = np.nan  # read as float because of a missing value
    result = _run(
        frame, sensitive="race", observed=["sex", "priors_count", "decile_score"], epsilon=3.0,
        missing="drop", hierarchies={"priors_count": SHARED / "priors_count.csv",
                                     "decile_score": SHARED / "decile_score.csv"},
    )  # fmt: skip
    assert result.summary["n_dropped_missing"] == 1
    assert set(_release(result)["priors_count"]) <= _file_labels(SHARED / "priors_count.csv")
    assert "0" in set(_release(result)["priors_count"])  # "0", not "0.0"


def test_missing_category_keeps_a_numeric_hierarchy_column(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame({"s": rng.choice(["a", "b"], n), "x": rng.integers(0, 4, n).astype(float)})
    frame.loc[::10, "x"] = np.nan
    hierarchy = tmp_path / "x.csv"
    hierarchy.write_text("0;low;*\n1;low;*\n2;high;*\n3;high;*\n<missing>;<missing>;*\n")
    result = _run(
        frame, sensitive="s", epsilon=2.0, missing="category", hierarchies={"x": hierarchy}
    )
    assert "<missing>" in set(_data(result)["x"]) and result.summary["n_dropped_missing"] == 0
    assert set(_release(result)["x"]) <= {"0", "1", "2", "3", "low", "high", "<missing>", "*"}


def test_numeric_hierarchy_column_in_the_cli(
    compas: pd.DataFrame, age_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    res = runner.invoke(app, [
        "audit", str(_bundled_compas()), "--sensitive", "race", "--observed",
        "age,priors_count", "--hierarchy", f"age={age_file}", "--hierarchy",
        f"priors_count={SHARED / 'priors_count.csv'}", "--epsilon", "3", "--folds", "0",
        "--no-checks", "--out", str(out), "-q",
    ])  # fmt: skip
    assert res.exit_code in (0, 3), res.output
    release = pd.read_csv(out / "release.csv", dtype=str)
    assert len(release) == len(compas)
    assert set(release["age"]) <= _file_labels(age_file)


# ------------------------------------------------------------ b: automatic nested intervals


def _income_table(n: int = 600, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.where(s == 1, "yes", "no"),
            "a": np.where(rng.random(n) < 0.3 + 0.3 * s, "hi", "lo"),
            "income": rng.normal(3000 + 600 * s, 800, n).round(2),  # a distinct value each
        }
    )


def test_many_valued_numeric_column_gets_nested_intervals() -> None:
    frame = _income_table()
    result = _run(frame, sensitive="s", epsilon=1.0)
    settings = result.settings
    edges = settings["bins"]["income"]
    assert len(edges) == 15 and edges == sorted(edges)
    assert settings["hierarchies"]["income"].startswith("automatic: 16 nested quantile")
    assert result.summary["n_observed_symbols"] <= 2 * 16  # binned before the estimate
    labels = set(_release(result)["income"]) - {SUPPRESSED}
    assert labels and all(lbl.startswith(("<", "[", ">=")) for lbl in labels)
    # the released intervals nest: every one is a union of the 16 fine ones
    assert result.found is not None
    h = result.found.hierarchies["income"]
    assert [len(set(level)) for level in h.labels] == [16, 8, 4, 2, 1]
    # the saved mechanism bins new records with the same cut points: none is unseen
    new = _income_table(50, seed=9)
    applied = result.generalisation().apply(new)
    assert applied.n_unseen == 0


def test_explicit_bins_and_max_levels_none_keep_their_meaning() -> None:
    frame = _income_table()
    result = _run(frame, sensitive="s", epsilon=1.0, bins={"income": 4})
    assert len(result.settings["bins"]["income"]) == 3
    assert "income" not in result.settings["hierarchies"]
    labels = set(_data(result)["income"].astype(str))
    assert len(labels) == 4 and all(lbl.startswith(("<", "[", ">=")) for lbl in labels)
    # max_levels=None: the column is taken as it is (here an identifier, refused)
    spec = pw.audit.AuditSpec(sensitive=("s",), epsilon=1.0, max_levels=None, folds=0, checks=False)
    with pytest.raises(ValidationError, match=r"\['income'\] have a distinct value in every"):
        pw.audit.run(spec, frame)


def test_a_record_number_is_still_refused_unless_forced() -> None:
    frame = _income_table(300).assign(id=np.arange(300))
    with pytest.raises(ValidationError, match=r"\['id'\] have a distinct value in every"):
        _run(frame, sensitive="s", observed=["a", "id"], epsilon=1.0)
    forced = _run(frame, sensitive="s", observed=["a", "id"], epsilon=1.0, force=True)
    assert forced.settings["hierarchies"]["id"].startswith("automatic")


def test_learned_estimators_get_no_intervals() -> None:
    """The learned-estimator routes call resolve_columns with max_levels=None."""
    frame = _income_table(300)
    bins, hierarchies = resolve_columns(
        frame, "s", None, bins={}, hierarchies={}, missing="error", max_levels=None
    )
    assert bins == {} and hierarchies == {}
    bins, hierarchies = resolve_columns(
        frame, "s", None, bins={}, hierarchies={}, missing="error", max_levels=50
    )
    assert set(bins) == set(hierarchies) == {"income"}


# ------------------------------------------------------------ c: missing='drop' keeps rows


def test_missing_drop_keeps_one_row_per_input_record(tmp_path: Path) -> None:
    frame = _income_table(300).drop(columns="income")
    rng = np.random.default_rng(4)
    frame["b"] = rng.integers(0, 3, len(frame))
    frame.loc[frame.index % 7 == 0, "a"] = None
    frame.loc[frame.index % 11 == 0, "b"] = np.nan  # b is read as float
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "o"
    res = runner.invoke(app, ["audit", str(data), "--sensitive", "s", "--missing", "drop",
                              "--folds", "0", "--no-checks", "--out", str(out), "-q"])  # fmt: skip
    assert res.exit_code in (0, 3), res.output
    dropped = (frame[["a", "b"]].isna().any(axis=1)).to_numpy()
    leak = json.loads((out / "leakage.json").read_text())
    assert leak["summary"]["n_dropped_missing"] == dropped.sum() > 0
    for name in ("release.csv", "scores.csv"):
        table = pd.read_csv(out / name, keep_default_na=False, dtype=str)
        assert len(table) == len(frame), name
        np.testing.assert_array_equal(table["record"].astype(int), np.arange(len(frame)))
        np.testing.assert_array_equal(table["dropped_missing"] == "True", dropped)
        others = table.drop(columns=["record", "dropped_missing"])
        assert (others[dropped] == "").all().all(), name
        filled = ["a", "b"] if name == "release.csv" else ["risk", "flagged"]
        assert (others.loc[~dropped, filled] != "").all().all(), name
    release = pd.read_csv(out / "release.csv", keep_default_na=False, dtype=str)
    kept = release[~dropped]
    # joined back row for row: a kept record's released value is its own value or '*'
    own = frame["a"].to_numpy()[~dropped]
    assert ((kept["a"].to_numpy() == own) | (kept["a"].to_numpy() == "*")).all()
    scores = pd.read_csv(out / "scores.csv")
    assert scores["flagged"].dropna().isin([True, False]).all()


def test_missing_error_writes_no_dropped_column(tmp_path: Path) -> None:
    result = _run(_income_table(200).drop(columns="income"), sensitive="s", epsilon=1.0)
    write_audit(result, tmp_path / "o")
    assert "dropped_missing" not in pd.read_csv(tmp_path / "o" / "release.csv").columns


# ------------------------------------------------------------ d: NaN parameters, inf features


def test_nan_max_levels_is_refused() -> None:
    x, s = np.array([[0], [1]] * 10), [0, 1] * 10
    with pytest.raises(ValidationError, match="`max_levels` must be a positive int; got nan"):
        PluginLift(max_levels=math.nan).fit(x, s)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`max_levels`"):
        PluginLift(max_levels=2.5).fit(x, s)  # type: ignore[arg-type]
    assert PluginLift(max_levels=None).fit(x, s).table_.shape == (2, 2)


def test_infinite_feature_is_refused_naming_the_column() -> None:
    frame = pd.DataFrame({"a": np.r_[np.arange(99.0), np.inf], "b": ["x", "y"] * 50})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw RuntimeWarning either
        with pytest.raises(ValidationError, match=r"`a` must hold finite numbers; got inf"):
            ClassifierLift(epochs=1, n_ensemble=1, rng=0).fit(frame, [0, 1] * 50)
    fitted = ClassifierLift(epochs=1, n_ensemble=1, rng=0).fit(frame.iloc[:-1], [0, 1] * 49 + [0])
    with pytest.raises(ValidationError, match=r"`a` must hold finite numbers; got -inf"):
        fitted.log_lift(frame.assign(a=-np.inf))


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("weight_decay", math.nan),
        ("weight_decay", -1.0),
        ("dropout", math.nan),
        ("dropout", 1.0),
        ("patience", math.nan),
        ("lr", math.nan),
        ("hidden", (math.nan,)),
    ],
)
def test_nan_neural_parameters_are_refused(param: str, value: Any) -> None:
    frame = pd.DataFrame({"a": np.arange(40.0)})
    with pytest.raises(ValidationError, match=f"`{param}` must"):
        DVLift(epochs=1, rng=0, **{param: value}).fit(frame, [0, 1] * 20)


@pytest.mark.parametrize(
    "options",
    [{"grid": (math.nan, 1.0)}, {"grid": (-1.0,)},
     {"family": "gradient_boosting", "max_leaf_nodes": math.nan}],
)  # fmt: skip
def test_nan_posterior_parameters_are_refused(options: dict[str, Any]) -> None:
    name = next(k for k in options if k != "family")
    with pytest.raises(ValidationError, match=f"`{name}` must"):
        PosteriorLift(**options).fit(pd.DataFrame({"a": np.arange(40.0)}), [0, 1] * 20)


# ------------------------------------------------------------ e: several sensitive columns


def test_several_sensitive_columns_are_stored_as_a_list(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n = 500
    frame = pd.DataFrame(
        {
            "health": rng.choice(["ill", "well"], n),
            "race": rng.choice(["p", "q"], n),
            "a": rng.choice(["x", "y", "z"], n),
        }
    )
    result = _run(frame, sensitive=["health", "race"], observed=["a"], epsilon=2.0)
    doc = result.to_dict()
    assert doc["settings"]["sensitive"] == ["health", "race"]
    assert doc["summary"]["sensitive"] == ["health", "race"]
    assert result.generalisation().sensitive == "health+race"
    write_audit(result, tmp_path / "o")
    html = (tmp_path / "o" / "report.html").read_text()
    assert "<code>health + race</code>" in html and "['health'" not in html
    one = _run(frame, sensitive="health", observed=["a"], epsilon=2.0).to_dict()
    assert one["settings"]["sensitive"] == one["summary"]["sensitive"] == "health"


# ------------------------------------------------------------ f: epsilon 0 or tiny


def test_epsilon_zero_is_a_one_line_error(tmp_path: Path) -> None:
    out = tmp_path / "o"
    res = runner.invoke(app, ["audit", "--dataset", "compas", "--epsilon", "0",
                              "--out", str(out)])  # fmt: skip
    assert res.exit_code == 2
    assert res.stderr.strip() == "error: --epsilon must be a positive finite number; got 0.0."
    assert not out.exists()  # a failed run leaves no output folder


def test_tiny_epsilon_is_not_met(tmp_path: Path) -> None:
    out = tmp_path / "o"
    res = runner.invoke(app, ["audit", "--dataset", "compas", "--epsilon", "0.000001",
                              "--out", str(out)])  # fmt: skip
    assert res.exit_code == 3, res.output
    assert "Traceback" not in res.output and "NOT MET" in res.stdout
    leak = json.loads((out / "leakage.json").read_text())
    assert leak["status"] == "not_met" and leak["epsilon"] == 1e-6


@pytest.mark.parametrize("column", ["nonexistent", "s"])
def test_bins_of_a_column_that_is_not_observed_are_refused(column: str) -> None:
    frame = pd.DataFrame({"s": ["a", "b"] * 20, "x": [1, 2, 3, 4] * 10, "y": ["u", "v"] * 20})
    with pytest.raises(ValidationError, match=r"`bins` names \['" + column + r"'\]"):
        _run(frame, sensitive="s", observed=["x"], epsilon=1.0, bins={column: 2})


def test_bins_of_a_column_that_is_not_observed_are_refused_in_the_cli(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        app, ["audit", "--dataset", "compas", "--epsilon", "1", "--bins", "agee=4",
              "--out", str(tmp_path / "o")],
    )  # fmt: skip
    assert out.exit_code != 0
    assert "--bins names ['agee']" in out.output
    assert not (tmp_path / "o" / "release.csv").exists()
