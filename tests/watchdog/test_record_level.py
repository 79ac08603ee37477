"""The Watchdog with learned log-lift estimators (per-record partition, Hsu et al. §IV)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from privwatch import PrivacyWarning, ValidationError, Watchdog
from privwatch.estimators import ClassifierLift, DVLift, PluginLift, PosteriorLift
from privwatch.watchdog import record_tradeoff
from privwatch.watchdog._records import RecordStrategy

FAST: dict[str, Any] = {"epochs": 40, "n_ensemble": 1, "patience": 10}


OBSERVED = ["u", "v", "c"]


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


def _true_log_lift(df: pd.DataFrame) -> np.ndarray:
    """Closed form of the model of :func:`_data`: S uniform on {a, b}, U | S ~ N(1.2 S, 1),
    P(c = hi | S) = 0.3 + 0.4 S, V independent noise; i(s, x) = log P(x|s) - log P(x)."""
    hi = (df["c"] == "hi").to_numpy()
    u = df["u"].to_numpy()
    log_px_s = np.stack(
        [
            -0.5 * (u - 1.2 * s) ** 2 + np.log(np.where(hi, 0.3 + 0.4 * s, 0.7 - 0.4 * s))
            for s in (0, 1)
        ],
        axis=1,
    )
    return np.asarray(log_px_s - logsumexp(log_px_s + np.log(0.5), axis=1, keepdims=True))


@pytest.mark.parametrize(
    "make",
    [
        lambda: PosteriorLift(rng=0),
        pytest.param(lambda: ClassifierLift(rng=0, **FAST), marks=pytest.mark.slow),
        pytest.param(lambda: DVLift(rng=0, **FAST), marks=pytest.mark.slow),
    ],
    ids=["posterior", "classifier", "dv"],
)
def test_record_level_scores_match_closed_form_on_held_out(make) -> None:  # type: ignore[no-untyped-def]
    """Held-out log-lift and flags against the closed form, next to the baseline that knows
    nothing (log-lift 0 everywhere; flag by the majority rule)."""
    train, test = _data(2000, 0), _data(500, 1)
    wd = Watchdog(epsilon=0.5, sensitive="s", observed=OBSERVED, estimator=make()).fit(train)
    scores = wd.score_records(test)
    truth = _true_log_lift(test)
    error = float(np.abs(scores.log_lift - truth).mean())
    baseline_error = float(np.abs(truth).mean())  # ~0.76 nats
    assert error < 0.25 * baseline_error, (error, baseline_error)
    true_flags = np.abs(truth).max(axis=1) > 0.5
    agreement = float(np.mean(wd.flag(test) == true_flags))
    majority = max(true_flags.mean(), 1 - true_flags.mean())  # ~0.70
    assert agreement > majority + 0.1, (agreement, majority)
    assert np.array_equal(wd.score_samples(test), scores.risk)


def test_record_level_release_realizes_its_stated_randomized_level() -> None:
    """The merge release, read back from the released table alone, has the stated randomized
    level and flagged fraction; kept records are released unchanged."""
    train = _data(2000, 0)
    wd = Watchdog(epsilon=0.5, sensitive="s", observed=OBSERVED, estimator=PosteriorLift(rng=0))
    wd.fit(train)
    release = wd.transform(train)
    merged = (release == "*").all(axis=1).to_numpy()
    assert merged.any() and not merged.all()
    g = wd.guarantee_
    assert g.basis.startswith("estimated by")
    assert merged.mean() == pytest.approx(g.flagged_probability)
    prior = train["s"].value_counts(normalize=True)
    in_merged = train.loc[merged, "s"].value_counts(normalize=True)
    level = float(np.abs(np.log(in_merged / prior)).max())
    assert level == pytest.approx(g.randomized_epsilon, abs=1e-12)
    kept_risk = wd.score_samples(train)[~merged]
    assert g.effective_epsilon == pytest.approx(max(level, float(kept_risk.max())))
    pd.testing.assert_frame_equal(
        release.loc[~merged].astype(float, errors="ignore"),
        train.loc[~merged, OBSERVED],
        check_dtype=False,
    )
    # the record-level tradeoff at the same threshold states the same numbers
    curve = record_tradeoff(wd.score_samples(train), train["s"], [0.5])
    assert curve.randomized_epsilon[0] == pytest.approx(g.randomized_epsilon)
    assert curve.flagged_probability[0] == pytest.approx(g.flagged_probability)
    assert curve.utility_mi[0] == pytest.approx(wd.utility_.utility_mi)


def test_uniform_draws_flagged_fit_records_scored_cross_fitted() -> None:
    train = _data(1500, 2)
    wd = Watchdog(
        epsilon=0.4,
        sensitive="s",
        observed=OBSERVED,
        randomization="uniform",
        rng=3,
        estimator=PosteriorLift(C=0.1, rng=0),
    ).fit(train)
    strategy = wd.strategy_
    assert isinstance(strategy, RecordStrategy)
    # the fit records are scored by the fold models that did not see them
    assert sorted(np.unique(strategy.fold)) == [0, 1, 2, 3, 4]
    scores = wd.score_records(train)
    in_sample = strategy.estimator.log_lift(train[OBSERVED])
    assert not np.allclose(scores.log_lift, in_sample)
    # lift_ holds the cross-fitted log-lift of every fit record
    assert wd.lift_.shape == (len(train), 2) and list(wd.lift_.columns) == ["a", "b"]
    np.testing.assert_array_equal(wd.lift_.to_numpy(), scores.log_lift)
    # a reordered copy is not "the fit records": it gets the all-records model
    shuffled = train.iloc[::-1].reset_index(drop=True)
    assert np.allclose(wd.score_records(shuffled).log_lift, in_sample[::-1])
    assert "cross-fitted (5 folds)" in wd.guarantee_.basis
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        release = wd.transform(train)  # cross-fitted: no same-records warning
    flagged = wd.flag(train)
    pool = {tuple(r) for r in strategy.pool.itertuples(index=False)}
    drawn = {tuple(r) for r in release.loc[flagged].itertuples(index=False)}
    assert flagged.any() and drawn <= pool


def test_without_crossfitting_warns_on_the_fit_records() -> None:
    train = _data(800, 6)
    s_codes = (train["s"] == "b").to_numpy().astype(np.int64)
    rec = RecordStrategy(PosteriorLift(C=0.1, rng=0), ["u", "c"], cv=None)
    rec.fit(train, s_codes, ["a", "b"], "s")
    rec.threshold(0.4, None, np.inf)
    assert (rec.fold == -1).all()
    with pytest.warns(PrivacyWarning, match="very records being released"):
        rec.release(train, "merge", "*", 0)


def test_plugin_estimator_uses_exact_path() -> None:
    df = _data(3000, 4).assign(u=lambda d: (d.u > 0.6).astype(int), v=0)
    a = Watchdog(
        epsilon=0.3, sensitive="s", observed=["u", "c"], estimator=PluginLift(smoothing=1.0)
    )
    b = Watchdog(epsilon=0.3, sensitive="s", observed=["u", "c"], smoothing=1.0)
    a.fit(df)
    b.fit(df)
    assert a.joint_.p.shape == (2, 4)
    assert np.array_equal(a.keep_, b.keep_)
    assert a.guarantee_ == b.guarantee_


def test_record_level_errors() -> None:
    df = _data(300, 5)
    with pytest.raises(ValidationError, match="`delta` .* needs the plug-in watchdog"):
        Watchdog(delta=0.1, sensitive="s", observed=["u"], estimator=ClassifierLift(**FAST)).fit(df)
    with pytest.raises(ValidationError, match="`estimator` must be a privwatch log-lift"):
        Watchdog(sensitive="s", observed=["u"], estimator=object()).fit(df)  # type: ignore[arg-type]
    wd = Watchdog(sensitive="s", observed=["u", "c"], estimator=PosteriorLift(C=0.1)).fit(df)
    with pytest.raises(ValidationError, match="evaluate\\(\\) needs the plug-in watchdog"):
        wd.evaluate(df)
    with pytest.raises(ValidationError, match="leakage_after_ needs the plug-in watchdog"):
        _ = wd.leakage_after_
    with pytest.raises(ValidationError, match="joint_ needs the plug-in watchdog"):
        _ = wd.joint_
