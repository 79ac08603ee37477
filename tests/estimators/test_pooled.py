"""PooledLift and AutoLift's default stacking (issue #16): super-learner weights by
cross-validated log-loss, the pooled log-lift, and the between-family part of the intervals."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import log_softmax

from privwatch import ValidationError
from privwatch.estimators import AutoLift, PosteriorLift, posterior_log_loss
from privwatch.estimators._pooled import PooledLift, pooling_weights

from .test_auto import cluster_pair, gaussian_pair

warnings.filterwarnings("ignore", category=FutureWarning)


def _noisy(truth: np.ndarray, sd: float, rng: np.random.Generator) -> np.ndarray:
    return np.asarray(log_softmax(truth + rng.normal(0, sd, truth.shape), axis=1))


def test_pooling_weights_find_the_informative_and_split_equal_candidates() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    logits = rng.normal(0, 1.5, (n, 3))
    truth = log_softmax(logits, axis=1)
    codes = np.array([rng.choice(3, p=np.exp(row)) for row in truth])
    blind = np.log(np.full((n, 3), 1 / 3))
    w = pooling_weights([blind, truth], codes)
    assert w[1] > 0.95 and np.isclose(w.sum(), 1.0)
    # two equally noisy, independent versions of the truth: about half each, and the pool is
    # a better posterior than either (independent errors partly cancel)
    a, b = _noisy(logits, 0.8, rng), _noisy(logits, 0.8, rng)
    w = pooling_weights([a, b], codes)
    assert 0.35 < w[0] < 0.65
    pooled = log_softmax(w[0] * a + w[1] * b, axis=1)
    rows = np.arange(n)
    assert -pooled[rows, codes].mean() < min(-a[rows, codes].mean(), -b[rows, codes].mean())
    assert np.array_equal(pooling_weights([a], codes), [1.0])


def test_stacked_lift_pools_log_lifts_and_reports_disagreement() -> None:
    x, s, _ = gaussian_pair(1500, 1)
    members = (PosteriorLift(C=1.0), PosteriorLift(family="gradient_boosting"))
    est = PooledLift(estimators=members, weights=(3.0, 1.0), rng=0).fit(x, s)
    assert np.allclose(est.weights_, [0.75, 0.25])
    ll = est.log_lift(x[:50])
    each = np.stack([m.log_lift(x[:50]) for m in est.members_])
    assert np.allclose(np.exp(ll) @ est.prior_, 1.0)
    # binary: the pool is the weighted mean of the members' log-odds
    odds = ll[:, 1] - ll[:, 0]
    assert np.allclose(
        odds, 0.75 * (each[0, :, 1] - each[0, :, 0]) + 0.25 * (each[1, :, 1] - each[1, :, 0])
    )
    var = est.model_variance(x[:50])
    mean = 0.75 * each[0] + 0.25 * each[1]
    assert np.allclose(var, 0.75 * (each[0] - mean) ** 2 + 0.25 * (each[1] - mean) ** 2)
    twin = est.frozen_estimator().fit(x, s)
    again = est.frozen_estimator().fit(x, s)
    assert np.array_equal(twin.log_lift(x[:50]), again.log_lift(x[:50]))
    assert "quadratic" not in est.describe() and "0.75" in est.describe()


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"estimators": (), "weights": ()}, "`weights` must hold one weight per estimator"),
        ({"weights": (1.0, 2.0)}, "`weights` must hold one weight per estimator"),
        ({"weights": (-1.0,)}, "`weights` must be non-negative finite numbers"),
        ({"weights": (np.nan,)}, "`weights` must be non-negative finite numbers"),
    ],
)
def test_stacked_lift_bad_weights(kwargs: dict[str, object], pattern: str) -> None:
    x, s, _ = gaussian_pair(200, 0)
    params: dict[str, object] = {"estimators": (PosteriorLift(C=1.0),)} | kwargs
    with pytest.raises(ValidationError, match=pattern):
        PooledLift(**params).fit(x, s)  # type: ignore[arg-type]


@pytest.mark.slow
def test_auto_stacks_where_two_families_help_and_intervals_carry_their_disagreement(
    tmp_path: Path,
) -> None:
    x, s, _ = cluster_pair(1500, 2)
    x_te, s_te, _ = cluster_pair(3000, 3)
    est = AutoLift(candidates=("quadratic_logistic", "gaussian_mixture"), rng=0)
    scores = est.fit_score(x, s, cv=5, n_repeats=1)
    assert isinstance(est.best_, PooledLift), est.reason_
    assert est.best_name_.startswith("stack: ") and "super learner" in est.reason_
    assert np.isclose(est.selection_["weight"].sum(), 1.0)
    assert (est.selection_["weight"] > 0).all() and est.selection_["chosen"].all()
    # the pool is a posterior at least as good as its better member on fresh records
    stacked, _ = posterior_log_loss(est, x_te, s_te)
    alone = [posterior_log_loss(m, x_te, s_te)[0].mean() for m in est.best_.members_]
    assert stacked.mean() <= min(alone) + 0.005
    assert "between-family variance" in scores.interval_method
    lo, hi = est.log_lift_interval(x_te)
    between = est.model_variance(x_te)
    assert (between > 0).any() and np.all(hi - lo > 0)
    with pytest.raises(ValidationError, match="cannot be saved as one file"):
        est.save(tmp_path / "m.json")
    single = AutoLift(candidates=("quadratic_logistic",), rng=0).fit(x, s)
    assert isinstance(single.best_, PosteriorLift)
    assert np.array_equal(single.model_variance(x_te), np.zeros((3000, 2)))
