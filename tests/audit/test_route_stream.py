"""The streamed route (``privwatch audit LAKE --estimator classifier|dv``, or
:func:`privwatch.audit.run` with such an estimator on Parquet files): the records are streamed,
never loaded, scored cross-fitted, flagged, released, and the verdict is true.

What is tested: the written records are every record in order with its fold, risk, flag and
release; the guarantee in leakage.json is the one the written flags imply; a release whose
flagged records still give the sensitive value away is NOT MET (exit 3, the reason, an
alternative); options the streamed route cannot honour are refused before any training.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privwatch.audit import Audit, run
from privwatch.cli import app
from privwatch.engines import fold_of
from privwatch.watchdog import flagged_set_guarantee

runner = CliRunner()


def _lake(folder: Path, n: int, seed: int, rare_island: bool) -> str:
    """Two Parquet files. With ``rare_island``, 15 % of the records sit on an island (x near 6)
    where s is always 1, and s is a fair coin everywhere else: the true risk is 0.16 nats off
    the island and infinite on it, so at epsilon 0.5 the island is flagged, and merging it
    leaves a released value that still says s = 1."""
    g = np.random.default_rng(seed)
    if rare_island:
        island = g.random(n) < 0.15
        s = np.where(island, 1, g.integers(0, 2, n))
        x = np.where(island, 6 + g.normal(0, 0.3, n), g.normal(0, 1, n))
    else:
        s = g.integers(0, 2, n)
        x = 0.3 * s + g.normal(0, 1, n)
    frame = pd.DataFrame({"s": s, "x": x, "c": g.choice(["u", "v"], n)})
    folder.mkdir()
    half = n // 2
    frame.iloc[:half].to_parquet(folder / "part-0.parquet", row_group_size=200)
    frame.iloc[half:].to_parquet(folder / "part-1.parquet", row_group_size=200)
    return str(folder / "part-*.parquet")


def _run(*args: str) -> Any:
    return runner.invoke(app, ["audit", *args, "--sensitive", "s", "--observed", "x,c"])


def test_written_records_flags_and_guarantee_agree(tmp_path: Path) -> None:
    glob = _lake(tmp_path / "lake", 800, 0, rare_island=False)
    res = _run(glob, "--estimator", "classifier", "--epsilon", "0.2", "--folds", "2",
               "--out", str(tmp_path / "out"), "--json")  # fmt: skip
    assert res.exit_code in (0, 3), res.output
    doc = json.loads(res.stdout)
    assert doc["route"] == doc["engine"] == "stream"
    assert "reads the Parquet files in batches" in doc["engine_reason"]
    leak = json.loads((tmp_path / "out" / "leakage.json").read_text())
    assert leak["route"] == "stream" and leak["estimator"] == "classifier"
    out = tmp_path / "out"
    assert leak["written"] == [str(out / "release.parquet"), str(out / "scores.parquet")]
    assert leak["markers"] == {"x": "*", "c": "*"}  # no value of x or c is "*"
    release = pd.read_parquet(out / "release.parquet")
    written = pd.read_parquet(out / "scores.parquet")
    # the release is publishable: the record key and the released columns, nothing else
    assert list(release.columns) == ["record", "x", "c"]
    scored = ["record", "fold", "log_lift[0]", "log_lift[1]", "risk", "flagged"]
    assert list(written.columns) == scored
    source = pd.concat(pd.read_parquet(p) for p in sorted((tmp_path / "lake").iterdir()))
    rows = np.arange(800)
    assert written["record"].tolist() == release["record"].tolist() == rows.tolist()
    assert np.array_equal(written["fold"].to_numpy(), fold_of(rows, 2, 0))
    flagged = written["risk"].to_numpy() > 0.2
    assert np.array_equal(written["flagged"].to_numpy(), flagged)
    assert 0 < flagged.sum() < 800  # a weak signal: some records flagged, not all
    for col in ("x", "c"):
        expected = np.where(flagged, "*", source[col].astype(str).to_numpy(dtype=object))
        assert release[col].tolist() == expected.tolist()
    s = source["s"].to_numpy()
    expected_g = flagged_set_guarantee(
        np.bincount(s), np.bincount(s[flagged], minlength=2),
        float(written["risk"][~flagged].max()), 0.2, leak["guarantee"]["basis"],
    )  # fmt: skip
    assert leak["guarantee"] == expected_g.to_dict()
    assert leak["summary"]["n_flagged"] == doc["n_flagged"] == int(flagged.sum())
    # the held-out figure of a uniform sample (all 800 records here), the one verdict rule:
    # MET only when the merged marker is within the box and the interval within the tolerance
    held = leak["held_out"]
    lo, hi = held["breach_probability_ci"]
    assert 0.0 <= lo <= held["breach_probability"] <= hi <= 1.0 and held["n_records"] == 800
    assert held["folds"] == 2
    met = expected_g.breach_probability == 0 and hi <= 0.05
    assert doc["status"] == ("met" if met else "not_met")
    assert (hi > 0.05) == any("held-out" in r or "estimated" in r for r in leak["reasons"])
    assert res.exit_code == (0 if doc["status"] == "met" else 3)
    ll = written[["log_lift[0]", "log_lift[1]"]].to_numpy()
    mi = leak["before"]["mutual_information_estimate"]
    assert mi == pytest.approx(ll[rows, s].mean(), rel=1e-12)


def test_flagged_records_that_still_reveal_the_value_are_not_met(tmp_path: Path) -> None:
    glob = _lake(tmp_path / "lake", 600, 1, rare_island=True)
    res = _run(glob, "--estimator", "classifier", "--epsilon", "0.5", "--folds", "2",
               "--out", str(tmp_path / "out"))  # fmt: skip
    assert res.exit_code == 3, res.output
    text = " ".join(res.output.split())
    assert "flagged records released as" in text
    assert "NOT MET" in text and "still reveal the sensitive value" in text
    assert "a larger epsilon (at least" in text  # the alternative
    assert "--estimator plugin" in text and "`" not in text  # flags, not parameters
    leak = json.loads((tmp_path / "out" / "leakage.json").read_text())
    assert leak["status"] == "not_met" and leak["guarantee"]["breach_probability"] > 0


def test_library_route_is_reproducible(tmp_path: Path) -> None:
    """Twice the same seed, the records written to two folders: the same guarantee and the
    same records."""
    glob = _lake(tmp_path / "lake", 600, 2, rare_island=False)
    options: dict[str, Any] = {
        "sensitive": "s", "observed": ["x", "c"], "epsilon": 0.2, "estimator": "dv",
        "folds": 2, "seed": 3, "estimator_params": {"epochs": 2, "n_ensemble": 1},
    }  # fmt: skip
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    res = run(source=glob, out=tmp_path / "a", **options)
    again = run(source=glob, out=tmp_path / "b", **options)
    assert isinstance(res, Audit) and res.route == again.route == "stream"
    assert res.written == [str(tmp_path / "a" / f) for f in ("release.parquet", "scores.parquet")]
    assert res.leakage["guarantee"] == again.leakage["guarantee"]
    assert res.summary["n_records"] == 600
    for name in ("release.parquet", "scores.parquet"):
        first = pd.read_parquet(tmp_path / "a" / name)
        assert first.equals(pd.read_parquet(tmp_path / "b" / name)), name
    source = pd.concat(pd.read_parquet(p) for p in sorted((tmp_path / "lake").iterdir()))
    counts = source["s"].value_counts()
    assert res.summary["sensitive_counts"] == {"0": int(counts[0]), "1": int(counts[1])}


def test_no_records_scores_every_record_and_writes_none(tmp_path: Path) -> None:
    """``records=False``: the same guarantee as the run that writes the records, no file."""
    glob = _lake(tmp_path / "lake", 600, 2, rare_island=False)
    options: dict[str, Any] = {
        "sensitive": "s", "observed": ["x", "c"], "epsilon": 0.2, "estimator": "dv",
        "folds": 2, "seed": 3, "estimator_params": {"epochs": 2, "n_ensemble": 1},
    }  # fmt: skip
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    res = run(source=glob, out=tmp_path / "a", **options)
    bare = run(source=glob, out=tmp_path / "b", records=False, **options)
    assert bare.route == "stream" and bare.written is None
    assert list((tmp_path / "b").iterdir()) == []
    assert bare.leakage["guarantee"] == res.leakage["guarantee"]
    assert bare.summary == res.summary


def test_the_marker_never_collides_with_a_value_of_the_column(tmp_path: Path) -> None:
    """A categorical column that holds ``*`` (and ``**``) gets ``***`` as its marker, so a
    suppressed record can never be read as a real one; the numeric column keeps ``*``."""
    g = np.random.default_rng(4)
    n = 600
    s = g.integers(0, 2, n)
    c = np.where(s == 1, g.choice(["*", "**", "v"], n), g.choice(["v", "w"], n))
    frame = pd.DataFrame({"s": s, "x": g.normal(0, 1, n), "c": c})
    frame.to_parquet(tmp_path / "t.parquet", row_group_size=150)
    out = tmp_path / "out"
    out.mkdir()
    res = run(  # a glob: streamed (one small file alone would be read into memory)
        source=str(tmp_path / "t*.parquet"), sensitive="s", observed=["x", "c"], epsilon=0.2,
        estimator="classifier", out=out, folds=2,
        estimator_params={"epochs": 3, "n_ensemble": 1},
    )  # fmt: skip
    assert res.route == "stream"
    markers = res.details["markers"]
    assert markers == {"x": "*", "c": "***"} and res.to_dict()["markers"] == markers
    flagged = pd.read_parquet(out / "scores.parquet")["flagged"].to_numpy()
    assert 0 < flagged.sum() < n  # "*" and "**" say s = 1: flagged at 0.2 nats
    released = pd.read_parquet(out / "release.parquet")["c"].to_numpy()
    assert set(released[flagged]) == {"***"}
    assert released[~flagged].tolist() == c[~flagged].tolist()
    assert "***" not in set(c)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "duckdb"], "leave --engine at 'auto'"),
        ([], "--epsilon is required with --estimator classifier"),
        (["--epsilon", "0.5", "--folds", "1"], "--folds must be 0 (no held-out check) or >= 2"),
        (["--epsilon", "0.5", "--folds", "0"], "scores every record cross-fitted: --folds must"),
        (["--epsilon", "0.5", "--bins", "x=4"], "--bins needs the records in memory"),
        (["--epsilon", "0.5", "--delta", "0.1"], "--delta needs the records in memory"),
        (["--epsilon", "0.5", "--write-table", "t"], "--write-table names new tables of a"),
    ],
)
def test_refused_before_training(tmp_path: Path, args: list[str], message: str) -> None:
    glob = _lake(tmp_path / "lake", 100, 0, rare_island=False)
    res = _run(glob, "--estimator", "classifier", *args, "--out", str(tmp_path / "out"))
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split()) and "`" not in res.output
    assert not (tmp_path / "out").exists()


def test_a_database_table_is_refused(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "t.db"
    with sqlite3.connect(db) as con:
        pd.DataFrame({"s": [0, 1] * 50, "x": range(100), "c": ["u"] * 100}).to_sql("t", con)
    res = _run(f"sqlite:///{db}", "--table", "t", "--estimator", "dv", "--epsilon", "0.5",
               "--out", str(tmp_path / "out"))  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "cannot read a database table" in " ".join(res.output.split())


def test_a_csv_glob_is_refused(tmp_path: Path) -> None:
    (tmp_path / "lake").mkdir()
    pd.DataFrame({"s": [0, 1] * 50, "x": range(100), "c": ["u"] * 100}).to_csv(
        tmp_path / "lake" / "a.csv", index=False
    )
    res = _run(str(tmp_path / "lake" / "*.csv"), "--estimator", "classifier", "--epsilon", "0.5",
               "--out", str(tmp_path / "out"))  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "streams Parquet files" in " ".join(res.output.split())


def test_risk_sample_holds_only_its_own_values() -> None:
    """The streamed route's risk sample keeps every stride-th risk; each kept piece must own its
    memory: a strided view kept its whole batch alive, so the memory grew with the stride, i.e.
    with the number of records (130-145 MiB more at 10^7 rows than at 10^6)."""
    import privwatch.audit._route_stream as rs

    sc = rs._Scored([0, 1], np.zeros(2), np.zeros(2), 0.0, 0.0, {}, [])
    batch = 65_536
    for _ in range(3 * rs.RISK_SAMPLE // batch):
        rs._keep_sample(sc, np.random.default_rng(0).random(batch))
    assert sc.stride > 1
    held = sum(r.base.nbytes if r.base is not None else r.nbytes for r in sc.risk)
    kept = sum(len(r) for r in sc.risk)
    assert kept <= rs.RISK_SAMPLE and held <= 8 * kept + 64
