"""The Watchdog with learned log-lift estimators (per-record partition, Hsu et al. §IV)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privwatch import PrivacyWarning, ValidationError, Watchdog
from privwatch.estimators import ClassifierLift, DVLift, PluginLift, PosteriorLift
from privwatch.watchdog._records import RecordWatchdog

FAST = {"epochs": 40, "n_ensemble": 1, "patience": 10}


def _data(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.where(s == 1, "b", "a"),
            "u": rng.normal(1.2 * s, 1.0),
            "v": rng.normal(0.0, 1.0, n),
            "c": np.where(rng.random(n) < 0.3 + 0.4 * s, "hi", "lo"),
        }
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: PosteriorLift(rng=0),
        pytest.param(lambda: ClassifierLift(rng=0, **FAST), marks=pytest.mark.slow),
        pytest.param(lambda: DVLift(rng=0, **FAST), marks=pytest.mark.slow),
    ],
    ids=["posterior", "classifier", "dv"],
)
def test_record_level_flags_and_merge(make) -> None:  # type: ignore[no-untyped-def]
    train, test = _data(2000, 0), _data(500, 1)
    wd = Watchdog(epsilon=0.5, estimator=make()).fit(train, "s", ["u", "v", "c"])
    scores = wd.score_samples(test)
    flags = wd.flag(test)
    assert np.array_equal(flags, scores.risk > 0.5)
    assert 0.05 < flags.mean() < 0.95
    release = wd.transform(test)
    assert list(release.columns) == ["u", "v", "c"]
    assert (release.loc[flags] == "*").all().all()
    pd.testing.assert_frame_equal(
        release.loc[~flags].astype(float, errors="ignore"),
        test.loc[~flags, ["u", "v", "c"]],
        check_dtype=False,
    )
    g = wd.guarantee_
    assert g.basis.startswith("estimated by")
    assert g.epsilon >= g.randomized_epsilon
    assert g.flagged_probability == pytest.approx(wd.flag(train).mean())


def test_uniform_draws_flagged_fit_records_scored_cross_fitted() -> None:
    train = _data(1500, 2)
    wd = Watchdog(
        epsilon=0.4, randomization="uniform", rng=3, estimator=PosteriorLift(C=0.1, rng=0)
    ).fit(train, "s", ["u", "v", "c"])
    records = wd.records_
    assert records is not None
    # the fit records are scored by the fold models that did not see them
    assert sorted(np.unique(records.fold_)) == [0, 1, 2, 3, 4]
    scores = wd.score_samples(train)
    assert np.array_equal(scores.log_lift, records.fit_log_lift_)
    in_sample = records.estimator.log_lift(train[["u", "v", "c"]])
    assert not np.allclose(scores.log_lift, in_sample)
    # a reordered copy is not "the fit records": it gets the all-records model
    shuffled = train.iloc[::-1].reset_index(drop=True)
    assert np.allclose(wd.score_samples(shuffled).log_lift, in_sample[::-1])
    assert "cross-fitted (5 folds)" in wd.guarantee_.basis
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        release = wd.transform(train)  # cross-fitted: no same-records warning
    flagged = wd.flag(train)
    pool = {tuple(r) for r in records.pool_.itertuples(index=False)}
    drawn = {tuple(r) for r in release.loc[flagged].itertuples(index=False)}
    assert drawn <= pool


def test_without_crossfitting_warns_on_the_fit_records() -> None:
    train = _data(800, 6)
    s_codes = (train["s"] == "b").to_numpy().astype(np.int64)
    rec = RecordWatchdog(PosteriorLift(C=0.1, rng=0), ["u", "c"], cv=None)
    rec.fit(train, s_codes, ["a", "b"]).threshold(0.4)
    assert (rec.fold_ == -1).all()
    flagged = rec.scores(train, ["a", "b"]).risk > 0.4
    with pytest.warns(PrivacyWarning, match="very records being released"):
        rec.transform(train, flagged, "merge", "*", 0)


def test_plugin_estimator_uses_exact_path() -> None:
    df = _data(3000, 4).assign(u=lambda d: (d.u > 0.6).astype(int), v=0)
    a = Watchdog(epsilon=0.3, estimator=PluginLift(smoothing=1.0)).fit(df, "s", ["u", "c"])
    b = Watchdog(epsilon=0.3, smoothing=1.0).fit(df, "s", ["u", "c"])
    assert a.records_ is None
    assert np.array_equal(a.keep_, b.keep_)
    assert a.guarantee_ == b.guarantee_


def test_record_level_errors() -> None:
    df = _data(300, 5)
    with pytest.raises(ValidationError, match="`delta` .* needs the plug-in watchdog"):
        Watchdog(delta=0.1, estimator=ClassifierLift(**FAST)).fit(df, "s", ["u"])
    with pytest.raises(ValidationError, match="`estimator` must be a privwatch log-lift"):
        Watchdog(estimator=object()).fit(df, "s", ["u"])  # type: ignore[arg-type]
    wd = Watchdog(estimator=PosteriorLift(C=0.1)).fit(df, "s", ["u", "c"])
    with pytest.raises(ValidationError, match="evaluate\\(\\) computes exact measures"):
        wd.evaluate(df, "s")
    with pytest.raises(ValidationError, match="exact leakage measures need the plug-in"):
        _ = wd.leakage_after_
