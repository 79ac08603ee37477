"""Every mechanism speaks one verb: release(observed, rng), channel(), privacy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch import measures as m
from privwatch.mechanisms import (
    Mechanism,
    PlanarLaplace,
    Privacy,
    RandomizedResponse,
    optimal_bayes_mechanism,
    optimal_privacy_mechanism,
)
from privwatch.release import Generalisation


def _finite_mechanisms() -> list[Mechanism]:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(2 * 4)).reshape(2, 4)
    loc = rng.uniform(0, 100, (4, 2))
    dist = np.linalg.norm(loc[:, None] - loc[None], axis=-1)
    p3 = np.zeros((2, 2, 2))
    p3[0, 0, 0] = p3[1, 1, 1] = 0.5
    return [
        RandomizedResponse(1.0, n_values=4),
        optimal_bayes_mechanism(p, dist, 20.0, method="direct"),
        optimal_privacy_mechanism(p3, 1 - np.eye(2), 0.25),
        Generalisation(
            ["a"],
            [["p"], ["q"], ["r"]],
            [["p"], ["*"], ["*"]],
            sensitive="s",
            epsilon=0.5,
            method="global",
            status="met",
        ),
    ]


@pytest.mark.parametrize("mech", _finite_mechanisms(), ids=lambda x: type(x).__name__)
def test_finite_mechanisms_release_what_their_channel_says(mech: Mechanism) -> None:
    k = mech.channel()
    assert isinstance(k, np.ndarray) and np.allclose(k.sum(axis=1), 1.0)
    n = 20_000
    observed = np.repeat(np.arange(k.shape[0]), n)
    released = mech.release(observed, rng=3)
    assert released.shape == observed.shape
    freq = np.stack(
        [np.bincount(r, minlength=k.shape[1]) / n for r in released.reshape(k.shape[0], n)]
    )
    assert np.abs(freq - k).max() < 0.02  # binomial sd <= 0.0036
    assert np.array_equal(mech.release(observed[:50], rng=4), mech.release(observed[:50], rng=4))
    assert isinstance(mech.privacy, Privacy) and math.isfinite(mech.privacy.value)
    with pytest.raises(ValidationError, match="`observed` must be a 1-d array of integer codes"):
        mech.release([k.shape[0]])
    with pytest.raises(ValidationError, match="`observed` must be a 1-d array of integer codes"):
        mech.release([0.5])


def test_sparse_release_of_column_generation() -> None:
    r = np.random.default_rng(1)
    users = np.sort(r.integers(0, 3, 40))
    loc = r.uniform(0, 100, (3, 2))[users] + r.normal(0, 15, (40, 2))
    out = r.uniform(-20, 120, (600, 2))
    p = np.zeros((3, 40))
    p[users, np.arange(40)] = 1 / 40
    dist = np.linalg.norm(loc[:, None] - out[None], axis=-1)
    res = optimal_bayes_mechanism(p, dist, 15.0, method="column_generation")
    k = res.channel()
    observed = np.repeat(np.arange(40), 3000)
    rel = res.release(observed, rng=0).reshape(40, 3000)
    freq = np.stack([np.bincount(row, minlength=600) / 3000 for row in rel])
    assert np.abs(freq - k).max() < 0.04
    assert set(np.unique(rel)) <= set(res.support.tolist())


def test_randomized_response_is_exactly_epsilon_ldp() -> None:
    for eps, n in ((0.0, 2), (0.7, 3), (2.5, 10)):
        rr = RandomizedResponse(eps, n_values=n)
        assert m.ldp_epsilon(rr.channel()) == pytest.approx(eps, abs=1e-12)
        assert rr.privacy == Privacy("ldp_epsilon", eps, True)
    assert np.array_equal(RandomizedResponse(math.inf, 3).channel(), np.eye(3))
    with pytest.raises(ValidationError, match="`n_values` must be an int >= 2"):
        RandomizedResponse(1.0, 1)
    with pytest.raises(ValidationError, match="`epsilon` must be a non-negative number"):
        RandomizedResponse(-1.0, 2)


def test_planar_laplace_is_a_mechanism_without_a_finite_channel() -> None:
    lap = PlanarLaplace(0.02)
    assert isinstance(lap, Mechanism)
    assert lap.privacy.to_dict() == {"measure": "geo_epsilon", "value": 0.02, "guaranteed": True}
    assert lap.release(np.zeros((3, 2)), rng=0).shape == (3, 2)


def test_learned_mechanisms_speak_the_same_verbs() -> None:
    pytest.importorskip("torch")
    from privwatch.adversarial import PPAN, Obfuscator
    from privwatch.datasets import symmetric_pair

    data = symmetric_pair(300, m=3, p=0.3, observation="useful", rng=0)
    ppan = PPAN.finite(1 - np.eye(3), n_observed=3, n_sensitive=3, budget=0.3, epochs=3, rng=0)
    ppan.fit(data.observed, data.sensitive, data.useful)
    assert isinstance(ppan, Mechanism)
    k = ppan.channel()
    assert k.shape == (3, 3) and np.allclose(k.sum(axis=1), 1.0)
    assert ppan.release(data.observed[:10], rng=0).shape == (10,)
    privacy = ppan.privacy
    assert privacy.measure == "guess_log_likelihood" and not privacy.guaranteed
    assert privacy.value == ppan.history_[-1]["log_likelihood"] <= 0.0

    r = np.random.default_rng(0)
    users = np.repeat([0, 1], 60)
    points = np.array([[-50.0, 0.0], [50.0, 0.0]])[users] + r.normal(0, 5, (120, 2))
    ob = Obfuscator(60.0, max_iter=2, hits=1, classifier_epochs=2, generator_epochs=2, rng=0).fit(
        points, users
    )
    assert isinstance(ob, Mechanism)
    assert ob.release(points[:4], rng=0).shape == (4, 2)
    assert ob.privacy.measure == "guess_accuracy" and ob.privacy.value == ob.val_accuracy_
    with pytest.raises(ValidationError, match="`Obfuscator` must have a finite output"):
        ob.channel()


@pytest.mark.parametrize("randomization", ["merge", "uniform"])
def test_watchdog_mechanism_guarantees_its_lift_epsilon(randomization: str) -> None:
    from privwatch.datasets import random_joint
    from privwatch.watchdog import watchdog_channel, watchdog_mechanism

    p = random_joint(3, 6, rng=4)
    mech = watchdog_mechanism(p, 0.4, randomization)
    assert isinstance(mech, Mechanism)
    k = mech.channel()
    assert np.array_equal(k, watchdog_channel(p, 0.4, randomization))
    assert mech.privacy.measure == "lift_epsilon" and mech.privacy.guaranteed
    assert m.lift_epsilon(p @ k) == pytest.approx(mech.privacy.value, abs=1e-12)
    released = mech.release(np.repeat(np.arange(6), 4000), rng=0).reshape(6, 4000)
    freq = np.stack([np.bincount(r, minlength=6) / 4000 for r in released])
    assert np.abs(freq - k).max() < 0.03
