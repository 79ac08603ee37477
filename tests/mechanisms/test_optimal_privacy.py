"""The exact privacy-distortion optimum against the closed forms and random feasible channels."""

from __future__ import annotations

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch import measures as m
from privwatch import theory as t
from privwatch.mechanisms import optimal_privacy_mechanism


def symmetric_pair_models(m_: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """p[s, x, u] for observed = useful (useful data) and observed = (sensitive, useful)."""
    psu = np.full((m_, m_), p / (m_ * (m_ - 1)))
    np.fill_diagonal(psu, (1 - p) / m_)
    useful = np.zeros((m_, m_, m_))
    full = np.zeros((m_, m_ * m_, m_))
    for u in range(m_):
        useful[:, u, u] = psu[:, u]
    for s in range(m_):
        for u in range(m_):
            full[s, s * m_ + u, u] = psu[s, u]
    return useful, full


@pytest.mark.parametrize("budget", [0.0, 0.1, 0.3, 0.55, 0.8])
def test_matches_eq_30_and_31_on_the_symmetric_pair(budget: float) -> None:
    useful, full = symmetric_pair_models(10, 0.4)
    hamming = 1 - np.eye(10)
    for obs, pmf in (("useful", useful), ("full", full)):
        res = optimal_privacy_mechanism(pmf, hamming, budget)
        expected = t.symmetric_pair_optimum(budget, m=10, p=0.4, observation=obs)
        assert res.mutual_information == pytest.approx(expected, abs=1e-4)
        assert res.lower_bound <= expected + 1e-9  # the certificate never cuts the optimum
        assert res.gap <= 1e-4 and res.distortion <= budget + 1e-9


def test_random_instances_beat_random_feasible_channels() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3 * 4 * 3)).reshape(3, 4, 3)  # p[s, x, u]
    d = rng.uniform(0, 1, (3, 5))
    cost = p.sum(axis=0) @ d
    cheapest = cost.min(axis=1).sum()
    budget = cheapest + 0.1
    res = optimal_privacy_mechanism(p, d, budget)
    p_sx = p.sum(axis=2)
    assert res.mutual_information == pytest.approx(m.mutual_information(p_sx @ res.channel()))
    assert res.privacy.value == res.mutual_information and res.privacy.guaranteed
    codes = res.release(np.repeat(np.arange(4), 5000), rng=0)  # releases follow the channel
    freq = np.stack([np.bincount(c, minlength=5) / 5000 for c in codes.reshape(4, 5000)])
    assert np.abs(freq - res.channel()).max() < 0.03
    cheap = np.zeros((4, 5))
    cheap[np.arange(4), cost.argmin(axis=1)] = 1.0
    for _ in range(300):
        k = rng.dirichlet(np.ones(5) * 0.5, size=4)
        spent = (cost * k).sum()
        if spent > budget:  # mix with the cheapest channel to meet the budget
            lam = (spent - budget) / (spent - cheapest)
            k = (1 - lam) * k + lam * cheap
        assert m.mutual_information(p_sx @ k) >= res.lower_bound - 1e-9


def test_bad_inputs() -> None:
    useful, _ = symmetric_pair_models(3, 0.2)
    with pytest.raises(ValidationError, match="`distance` must be a finite non-negative"):
        optimal_privacy_mechanism(useful, np.ones((2, 3)), 0.1)
    with pytest.raises(ValidationError, match="`budget` must be a non-negative"):
        optimal_privacy_mechanism(useful, 1 - np.eye(3), -0.1)
    with pytest.raises(ValidationError, match="`budget` must allow at least one mechanism"):
        optimal_privacy_mechanism(useful, 1 - np.eye(3) + 0.5, 0.1)
    with pytest.raises(ValidationError, match="`p` must"):
        optimal_privacy_mechanism(useful[0], 1 - np.eye(3), 0.1)
