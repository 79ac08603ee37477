"""Cross-fitted scores, bootstrap intervals, flag rules; plug-in intervals (issue #16)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from privwatch import ValidationError
from privwatch import measures as m
from privwatch.estimators import (
    LiftScores,
    PluginLift,
    PosteriorLift,
    lift_intervals,
    miller_madow_mutual_information,
)

from .test_auto import gaussian_pair

warnings.filterwarnings("ignore", category=FutureWarning)


def test_folds_are_stratified_deterministic_and_disjoint() -> None:
    x, s, _ = gaussian_pair(1000, 0)
    a = PosteriorLift(C=0.1, rng=4).fit_score(x, s, cv=5, interval=None)
    b = PosteriorLift(C=0.1, rng=4).fit_score(x, s, cv=5, interval=None)
    c = PosteriorLift(C=0.1, rng=5).fit_score(x, s, cv=5, interval=None)
    assert np.array_equal(a.fold, b.fold) and np.array_equal(a.log_lift, b.log_lift)
    assert not np.array_equal(a.fold, c.fold)
    assert sorted(np.unique(a.fold)) == [0, 1, 2, 3, 4]
    assert all(abs((a.fold == k).sum() - 200) <= 1 for k in range(5))
    for k in range(5):  # stratified: each fold has the sensitive mix of the whole
        assert abs(s[a.fold == k].mean() - s.mean()) < 0.01
    assert np.isnan(a.lower).all() and a.interval_method == "none"


def test_crossfit_removes_the_optimism_of_in_sample_scores() -> None:
    """Pure noise (true log-lift 0) with an unregularised quadratic model on 30 features: the
    in-sample scores 'find' leakage, the cross-fitted ones do not."""
    rng = np.random.default_rng(1)
    x, s = rng.standard_normal((400, 30)), rng.integers(0, 2, 400)
    est = PosteriorLift(C=100.0, rng=0)
    scores = est.fit_score(x, s, cv=5, interval=None)
    rows = np.arange(400)
    in_sample_mi = float(est.log_lift(x)[rows, s].mean())
    crossfit_mi = float(scores.log_lift[rows, s].mean())
    assert in_sample_mi > 0.3
    assert crossfit_mi < 0.0


@pytest.mark.parametrize("interval", ["jackknife", "bootstrap"])
def test_intervals_cover_the_closed_form(interval: str) -> None:
    x, s, truth_tr = gaussian_pair(2000, 2)
    x_te, _, truth = gaussian_pair(2000, 3)
    est = PosteriorLift(rng=0)
    scores = est.fit_score(x, s, cv=5, level=0.9, interval=interval, n_bootstrap=20)
    lo, hi = est.log_lift_interval(x_te, 0.9)
    coverage = float(np.mean((lo <= truth) & (truth <= hi)))
    assert 0.8 <= coverage <= 0.995, coverage
    cf_cov = float(np.mean((scores.lower <= truth_tr) & (truth_tr <= scores.upper)))
    assert 0.8 <= cf_cov <= 0.995, cf_cov
    assert np.all(scores.lower <= scores.log_lift) and np.all(scores.log_lift <= scores.upper)
    assert scores.interval_method.startswith(interval if interval == "bootstrap" else "grouped")
    frame = scores.to_frame()
    assert list(frame.columns[:4]) == ["risk", "fold", "log_lift[0]", "lower[0]"]


def test_flag_rules() -> None:
    ll = np.array([[0.8, -0.9], [0.6, -0.5], [0.1, -0.1]])
    half = np.array([[0.2, 0.2], [0.2, 0.2], [0.2, 0.2]])
    scores = LiftScores(ll, ll - half, ll + half, np.zeros(3, np.int64), 0.9, [0, 1], "test")
    assert scores.flags(0.5, "interval").tolist() == [True, False, False]
    assert scores.flags(0.5, "conservative").tolist() == [True, True, False]
    assert scores.flags(0.5, "point").tolist() == [True, True, False]
    with pytest.raises(ValidationError, match="`rule` must be one of"):
        scores.flags(0.5, "median")


def test_crossfit_errors() -> None:
    x, s, _ = gaussian_pair(300, 4)
    est = PosteriorLift(C=0.1, rng=0)
    with pytest.raises(ValidationError, match="`cv` must be at least 2"):
        est.fit_score(x, s, cv=1)
    s_rare = np.zeros(300, dtype=int)
    s_rare[:3] = 1
    with pytest.raises(ValidationError, match="`cv` must be at most the count of the rarest"):
        est.fit_score(x, s_rare, cv=5)
    with pytest.raises(ValidationError, match="`level` must"):
        est.fit_score(x, s, level=1.5)
    est.fit(x, s)
    with pytest.raises(ValidationError, match="`interval` must be one of"):
        est.fit_score(x, s, interval="wild")
    est = PosteriorLift(C=0.1, rng=0).fit(x, s)
    with pytest.raises(ValidationError, match="the log-lift interval needs resampled models"):
        est.log_lift_interval(x)


def test_miller_madow_textbook_value_and_bias() -> None:
    est = miller_madow_mutual_information([[40, 10], [10, 40]], rng=0)
    # I = 0.8 log 1.6 + 0.2 log 0.4; correction (2 + 2 - 4 - 1) / (2 * 100)
    plugin = 0.8 * np.log(1.6) + 0.2 * np.log(0.4)
    assert est.plugin == pytest.approx(plugin)
    assert est.miller_madow == pytest.approx(plugin - 0.005)
    assert est.lower < est.miller_madow < est.upper
    # independent S and X on 2 x 10 cells, n = 200: plug-in bias ~ 9 / 400 nats
    rng = np.random.default_rng(0)
    p = np.full((2, 10), 0.05)
    draws = rng.multinomial(200, p.ravel(), size=300).reshape(300, 2, 10)
    plug = np.mean([m.mutual_information(d / 200) for d in draws])
    mm = np.mean([miller_madow_mutual_information(d, n_bootstrap=1).miller_madow for d in draws])
    assert plug > 0.015
    assert abs(mm) < plug / 3


def test_miller_madow_interval_covers() -> None:
    rng = np.random.default_rng(3)
    p = np.array([[0.3, 0.1, 0.1], [0.1, 0.1, 0.3]])
    truth = m.mutual_information(p)
    hits = [
        (e.lower <= truth <= e.upper)
        for e in (
            miller_madow_mutual_information(
                rng.multinomial(500, p.ravel()).reshape(2, 3), n_bootstrap=200, rng=k
            )
            for k in range(100)
        )
    ]
    assert 0.8 <= np.mean(hits) <= 0.98


def test_clopper_pearson_matches_scipy() -> None:
    counts = np.array([[8, 0, 30], [2, 5, 30]])
    out = lift_intervals(counts, level=0.9)
    prior = counts.sum(axis=1) / counts.sum()
    for x in range(3):
        n_x = int(counts[:, x].sum())
        for s in range(2):
            ci = binomtest(int(counts[s, x]), n_x).proportion_ci(0.9, method="exact")
            lo = np.log(ci.low / prior[s]) if ci.low > 0 else -np.inf
            assert out["lower"][x, s] == pytest.approx(lo)
            assert out["upper"][x, s] == pytest.approx(np.log(ci.high / prior[s]))
    with pytest.raises(ValidationError, match="`counts` must be a non-empty 2-D array"):
        lift_intervals(np.array([1, 2]))


def test_plugin_lift_exposes_the_intervals() -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, 600)
    s = (rng.random(600) < 0.2 + 0.2 * x).astype(int)
    est = PluginLift().fit(pd.DataFrame({"x": x}), s)
    table = est.tuple_intervals(0.9)
    assert list(table.columns) == [
        "n_x",
        "log_lift[0]",
        "lower[0]",
        "upper[0]",
        "log_lift[1]",
        "lower[1]",
        "upper[1]",
    ]
    assert table["n_x"].sum() == 600
    assert np.allclose(table[["log_lift[0]", "log_lift[1]"]].to_numpy(), est.table_)
    mi = est.mutual_information_interval(rng=0)
    assert mi.miller_madow < mi.plugin
    assert mi.lower < mi.miller_madow < mi.upper


def test_repeated_splits_average_out_of_fold_scores() -> None:
    """n_repeats = 3: every score is the mean of three models that never saw the record (checked
    against the fold models themselves); the first split's folds are reported; same seed, same
    result; the mean over splits is closer to the truth than the first split alone."""
    x, s, truth = gaussian_pair(1500, 6)
    est = PosteriorLift(C=1.0, rng=2)
    scores = est.fit_score(x, s, cv=5, n_repeats=3)
    again = PosteriorLift(C=1.0, rng=2).fit_score(x, s, cv=5, n_repeats=3)
    assert np.array_equal(scores.log_lift, again.log_lift)
    assert len(est.resamples_) == 15 and "mean over 3 splits" in scores.interval_method
    first = np.empty_like(scores.log_lift)
    for k in range(5):
        first[scores.fold == k] = est.resamples_[k].log_lift(x[scores.fold == k])
    one = PosteriorLift(C=1.0, rng=2).fit_score(x, s, cv=5, n_repeats=1, interval=None)
    err = [float(np.sqrt(np.mean((v - truth) ** 2))) for v in (scores.log_lift, first)]
    assert err[0] < err[1]
    assert np.isfinite(one.log_lift).all() and not np.array_equal(one.log_lift, scores.log_lift)
    with pytest.raises(ValidationError, match="`n_repeats`"):
        est.fit_score(x, s, n_repeats=0)
