"""fit_many: one PPAN per budget, sequentially or in worker processes, same result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch.adversarial import PPAN, fit_many
from privwatch.datasets import symmetric_pair


def _models(
    deltas: list[float], n_observed: int = 3, epochs: int = 15, **params: Any
) -> list[PPAN]:
    """One finite PPAN (m = 3) per budget, seeded by its position."""
    return [
        PPAN.finite(
            1 - np.eye(3),
            n_observed=n_observed,
            n_sensitive=3,
            budget=d,
            epochs=epochs,
            lr=0.05,
            adversary_lr=0.1,
            rng=i,
            **params,
        )
        for i, d in enumerate(deltas)
    ]


@pytest.mark.slow  # > 10 s on the shared 2-core machine
def test_parallel_fits_equal_sequential_fits_and_follow_their_budgets() -> None:
    deltas = [0.05, 0.3, 0.6]
    sets = [symmetric_pair(600, m=3, p=0.3, observation="useful", rng=s) for s in range(3)]
    data = [(d.observed, d.sensitive, d.useful) for d in sets]
    seq = fit_many(_models(deltas), data, n_jobs=1)
    par = fit_many(_models(deltas), data, n_jobs=2)
    for a, b in zip(seq, par, strict=True):
        np.testing.assert_allclose(a.channel(), b.channel(), atol=1e-6)
    # each model kept its own budget: more distortion allowed, less leakage
    mis = [s.evaluate(m.channel())[0] for s, m in zip(sets, seq, strict=True)]
    assert mis[0] > mis[1] > mis[2]


def test_one_shared_data_set() -> None:
    d = symmetric_pair(400, m=3, p=0.3, observation="useful", rng=0)
    fitted = fit_many(_models([0.1, 0.5]), (d.observed, d.sensitive, d.useful))
    assert all(hasattr(m, "fitted_") for m in fitted)
    assert d.evaluate(fitted[0].channel())[1] < d.evaluate(fitted[1].channel())[1]


def test_bad_input() -> None:
    d = symmetric_pair(100, m=3, p=0.3, observation="useful", rng=0)
    with pytest.raises(ValidationError, match="at least one"):
        fit_many([], (d.observed, d.sensitive, d.useful))
    with pytest.raises(ValidationError, match="one per model"):
        fit_many(_models([0.1, 0.2]), [(d.observed, d.sensitive, d.useful)] * 3)
    with pytest.raises(ValidationError, match="n_jobs"):
        fit_many(_models([0.1]), (d.observed, d.sensitive, d.useful), n_jobs=0)


@pytest.mark.parametrize(
    ("shape", "extra"),
    [(None, {"penalty": "per_sample"}), ((3, 3), {"schedule": "cosine", "adversary_steps": 2})],
)
def test_stacked_fit_is_the_same_arithmetic_as_fitting_one_by_one(
    shape: tuple[int, int] | None, extra: dict[str, Any]
) -> None:
    def models() -> list[PPAN]:
        return _models([0.0, 0.2, 0.5], 9, 12, observed_shape=shape, **extra)

    sets = [symmetric_pair(300, m=3, p=0.3, observation="full", rng=s) for s in range(3)]
    data = [(d.observed, d.sensitive, d.useful) for d in sets]
    one_by_one = fit_many(models(), data, stack=False)
    stacked = fit_many(models(), data)  # the default stacks them
    for a, b, s in zip(one_by_one, stacked, sets, strict=True):
        np.testing.assert_allclose(a.channel(), b.channel(), atol=1e-6)
        assert len(b.history_) == 12
        for ra, rb in zip(a.history_, b.history_, strict=True):
            assert ra["log_likelihood"] == pytest.approx(rb["log_likelihood"], abs=1e-5)
            assert ra["distortion"] == pytest.approx(rb["distortion"], abs=1e-5)
        assert np.array_equal(a.release(s.observed[:50], rng=3), b.release(s.observed[:50], rng=3))
    # trained, and each model kept its budget: leakage falls as delta grows
    mis = [s.evaluate(m.channel())[0] for s, m in zip(sets, stacked, strict=True)]
    assert mis[0] > mis[1] > mis[2]


def test_models_that_cannot_be_stacked_are_fitted_one_by_one() -> None:
    d = symmetric_pair(200, m=3, p=0.3, observation="useful", rng=0)
    seen: list[int] = []
    ms = _models([0.1, 0.4])
    ms[0].callbacks = [lambda rec, est: seen.append(rec["epoch"])]  # callbacks: not stackable
    fitted = fit_many(ms, (d.observed, d.sensitive, d.useful))
    assert seen == list(range(15)) and all(len(m.history_) == 15 for m in fitted)


def test_continuous_ppans_are_fitted_one_by_one() -> None:
    from privwatch.adversarial import GaussianAdversary, SeedNoiseMechanism, squared_error

    g = np.random.default_rng(0)
    x = g.standard_normal((200, 1))
    y = x + 0.5 * g.standard_normal((200, 1))

    def ppan(delta: float) -> PPAN:
        mech, adv = SeedNoiseMechanism(1, 1, hidden=(4,)), GaussianAdversary(1, 1, hidden=(4,))
        return PPAN(mech, adv, squared_error, budget=delta, epochs=2, batch_size=100, rng=0)

    fitted = fit_many([ppan(0.2), ppan(0.5)], (y, x, y))
    assert all(len(m.history_) == 2 for m in fitted)
