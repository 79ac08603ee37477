"""The exact privacy-distortion optimum against the closed forms and random feasible channels."""

from __future__ import annotations

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch import measures as m
from privwatch import theory as t
from privwatch.mechanisms import optimal_privacy_mechanism


def symmetric_pair_models(m_: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """p_wxy for W = Y (useful data) and W = (X, Y) (full data)."""
    pxy = np.full((m_, m_), p / (m_ * (m_ - 1)))
    np.fill_diagonal(pxy, (1 - p) / m_)
    useful = np.zeros((m_, m_, m_))
    full = np.zeros((m_ * m_, m_, m_))
    for y in range(m_):
        useful[y, :, y] = pxy[:, y]
    for x in range(m_):
        for y in range(m_):
            full[x * m_ + y, x, y] = pxy[x, y]
    return useful, full


@pytest.mark.parametrize("delta", [0.0, 0.1, 0.3, 0.55, 0.8])
def test_matches_eq_30_and_31_on_the_symmetric_pair(delta: float) -> None:
    useful, full = symmetric_pair_models(10, 0.4)
    hamming = 1 - np.eye(10)
    for obs, pmf in (("useful", useful), ("full", full)):
        res = optimal_privacy_mechanism(pmf, hamming, delta)
        expected = t.symmetric_pair(delta, m=10, p=0.4, observation=obs)
        assert res.mutual_information == pytest.approx(expected, abs=1e-4)
        assert res.lower_bound <= expected + 1e-9  # the certificate never cuts the optimum
        assert res.gap <= 1e-4 and res.distortion <= delta + 1e-9


def test_random_instances_beat_random_feasible_channels() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4 * 3 * 3)).reshape(4, 3, 3)
    d = rng.uniform(0, 1, (3, 5))
    cost = p.sum(axis=1) @ d
    cheapest = cost.min(axis=1).sum()
    delta = cheapest + 0.1
    res = optimal_privacy_mechanism(p, d, delta)
    p_wx = p.sum(axis=2)
    assert res.mutual_information == pytest.approx(m.mutual_information(p_wx.T @ res.channel))
    cheap = np.zeros((4, 5))
    cheap[np.arange(4), cost.argmin(axis=1)] = 1.0
    for _ in range(300):
        k = rng.dirichlet(np.ones(5) * 0.5, size=4)
        spent = (cost * k).sum()
        if spent > delta:  # mix with the cheapest channel to meet the budget
            lam = (spent - delta) / (spent - cheapest)
            k = (1 - lam) * k + lam * cheap
        assert m.mutual_information(p_wx.T @ k) >= res.lower_bound - 1e-9


def test_bad_inputs() -> None:
    useful, _ = symmetric_pair_models(3, 0.2)
    with pytest.raises(ValidationError, match="`distortion` must be a finite non-negative"):
        optimal_privacy_mechanism(useful, np.ones((2, 3)), 0.1)
    with pytest.raises(ValidationError, match="`delta` must be a non-negative"):
        optimal_privacy_mechanism(useful, 1 - np.eye(3), -0.1)
    with pytest.raises(ValidationError, match="`delta` must allow at least one mechanism"):
        optimal_privacy_mechanism(useful, 1 - np.eye(3) + 0.5, 0.1)
    with pytest.raises(ValidationError, match="`p_wxy` must"):
        optimal_privacy_mechanism(useful[0], 1 - np.eye(3), 0.1)
