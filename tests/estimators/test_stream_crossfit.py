"""Cross-fitting a neural lift estimator on a streamed Parquet source (issue #18 item 5: the CLI's
learned estimators on a source that does not fit in memory).

What is tested: a left-out fold has no influence on the fit (its records changed, the network
is bit-identical; changed elsewhere, it is not); every record is scored by the member that did
not see it; the guarantee from counts equals the record-level one; every bad input's message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch import ValidationError
from privwatch.engines import fold_of
from privwatch.estimators import ClassifierLift, DVLift, cross_fit_source
from privwatch.watchdog import flagged_set_guarantee
from privwatch.watchdog._records import record_guarantee

FAST: dict[str, Any] = {"epochs": 3, "n_ensemble": 1, "patience": 10, "batch_size": 128}


def frame_of(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    s = g.choice(3, n, p=[0.5, 0.3, 0.2])
    return pd.DataFrame(
        {
            "s": np.array(["lo", "mid", "hi"])[s],
            "x": s + g.normal(0, 1, n),
            "c": g.choice(list("abc"), n),
        }
    )


@pytest.mark.parametrize("make", [ClassifierLift, DVLift], ids=["classifier", "dv"])
def test_a_left_out_fold_does_not_touch_the_fit(tmp_path: Path, make: Any) -> None:
    frame = frame_of(2000, 0)
    fold = fold_of(np.arange(len(frame)), 3, 5)
    changed_in, changed_out = frame.copy(), frame.copy()
    g = np.random.default_rng(1)
    for changed, where in ((changed_in, fold == 1), (changed_out, fold == 0)):
        changed.loc[where, "s"] = g.permutation(changed.loc[where, "s"].to_numpy())
        changed.loc[where, "x"] = g.normal(5, 3, int(where.sum()))
    paths = []
    for name, f in (("ref", frame), ("in", changed_in), ("out", changed_out)):
        paths.append(tmp_path / f"{name}.parquet")
        f.to_parquet(paths[-1], row_group_size=400)
    nets = [
        make(rng=2, **FAST).fit_source(p, "s", ["x", "c"], leave_out_fold=(3, 5, 1)) for p in paths
    ]
    probe = frame[["x", "c"]]
    assert np.array_equal(nets[0].log_lift(probe), nets[1].log_lift(probe))  # fold 1 changed
    assert nets[0].histories_ == nets[1].histories_
    assert not np.array_equal(nets[0].log_lift(probe), nets[2].log_lift(probe))  # fold 0 changed


def test_every_record_is_scored_by_the_member_that_did_not_see_it(tmp_path: Path) -> None:
    frame = frame_of(1800, 3)
    for i in range(2):  # a glob of two files
        frame.iloc[i * 900 : (i + 1) * 900].to_parquet(
            tmp_path / f"p{i}.parquet", row_group_size=300
        )
    glob = str(tmp_path / "p*.parquet")
    fitted = cross_fit_source(ClassifierLift(rng=4, **FAST), glob, "s", ["x", "c"], folds=3, seed=7)
    assert fitted.sensitive_labels == ["hi", "lo", "mid"]
    assert len({id(m) for m in fitted.members}) == 3
    scores = pd.concat(list(fitted.score_batches(glob, keep=["s"], read_rows=250)))
    rows = np.arange(len(frame))
    assert scores["privwatch_row"].tolist() == rows.tolist()
    assert np.array_equal(scores["fold"].to_numpy(), fold_of(rows, 3, 7))
    assert scores["s"].tolist() == frame["s"].tolist()
    ll = scores[["log_lift[hi]", "log_lift[lo]", "log_lift[mid]"]].to_numpy()
    for k, member in enumerate(fitted.members):
        sel = scores["fold"].to_numpy() == k
        np.testing.assert_array_equal(ll[sel], member.log_lift(frame.loc[sel, ["x", "c"]]))
        other = fitted.members[(k + 1) % 3].log_lift(frame.loc[sel, ["x", "c"]])
        assert not np.array_equal(ll[sel], other)
    np.testing.assert_array_equal(scores["risk"].to_numpy(), np.abs(ll).max(axis=1))
    # the same seed: the same members, bit for bit
    again = cross_fit_source(ClassifierLift(rng=4, **FAST), glob, "s", ["x", "c"], folds=3, seed=7)
    ll2 = pd.concat(list(again.score_batches(glob)))[["log_lift[hi]", "log_lift[lo]"]].to_numpy()
    np.testing.assert_array_equal(ll2, ll[:, :2])


def test_guarantee_from_counts_equals_the_record_level_one() -> None:
    g = np.random.default_rng(0)
    for _ in range(20):
        n, n_s = int(g.integers(5, 400)), int(g.integers(2, 5))
        codes = g.integers(0, n_s, n)
        codes[:n_s] = np.arange(n_s)  # every value present
        risk = g.exponential(0.5, n)
        eps = float(g.uniform(0.05, 1.5))
        keep, expected, _ = record_guarantee(risk, codes, n_s, eps, "test")
        got = flagged_set_guarantee(
            np.bincount(codes, minlength=n_s),
            np.bincount(codes[~keep], minlength=n_s),
            float(risk[keep].max()) if keep.any() else 0.0,
            eps,
            "test",
        )
        assert got == expected


def test_bad_inputs(tmp_path: Path) -> None:
    frame = frame_of(600, 1)
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    est = ClassifierLift(rng=0, **FAST)
    with pytest.raises(ValidationError, match="tuple .folds, seed, k."):
        est.fit_source(path, "s", ["x"], leave_out_fold=[3, 0, 1])  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"fold `k` must be an integer in \[0, 3\)"):
        est.fit_source(path, "s", ["x"], leave_out_fold=(3, 0, 3))
    with pytest.raises(ValidationError, match=r"`folds` must be an integer in \[2, 2\*\*31\)"):
        cross_fit_source(est, path, "s", ["x"], folds=1)
    with pytest.raises(ValidationError, match="`seed` must be an integer"):
        cross_fit_source(est, path, "s", ["x"], seed=-1)
    rare = frame.copy()
    rows = np.flatnonzero(fold_of(np.arange(600), 2, 0) == 1)[:3]
    rare.loc[rows, "s"] = "rare"  # only in fold 1: absent from member 1's training records
    rare.to_parquet(path)
    with pytest.raises(ValidationError, match=r"\['rare'\] do not .fold 1 of 2."):
        cross_fit_source(est, path, "s", ["x"], folds=2)
    holes = frame.copy()
    holes["x"] = holes["x"].astype(object)
    holes.loc[int(rows[0]), "x"] = None  # a missing value inside the left-out fold still counts
    holes.to_parquet(path)
    with pytest.raises(ValidationError, match="no missing values"):
        est.fit_source(path, "s", ["x"], leave_out_fold=(2, 0, 1))
