"""Gaussian-mixture release mechanism (Tripathy, Wang, Ishwar App. F, eq. 29)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from privwatch import ValidationError, theory
from privwatch.adversarial import (
    PPAN,
    GaussianAdversary,
    GaussianMixtureMechanism,
    gaussian_mi,
    squared_error,
)
from privwatch.datasets import gaussian_pair

MU, SIGMA, LOGITS = [[-2.0], [1.0]], [[0.5], [1.5]], [0.0, math.log(3.0)]  # pi = (1/4, 3/4)


def _fixed() -> GaussianMixtureMechanism:
    """A 2-component mixture whose parameters do not depend on the observation."""
    mech = GaussianMixtureMechanism(1, 1, n_components=2, hidden=(3,))
    last = mech.net[-1]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(
            torch.tensor(
                [
                    MU[0][0],
                    math.log(SIGMA[0][0]),
                    LOGITS[0],
                    MU[1][0],
                    math.log(SIGMA[1][0]),
                    LOGITS[1],
                ]
            )
        )
    return mech


def test_release_samples_the_mixture() -> None:
    mech = _fixed()
    with torch.no_grad():
        z = mech.release(torch.zeros(200_000, 1), torch.Generator().manual_seed(0)).numpy()[:, 0]
    pi = np.array([0.25, 0.75])
    mu, var = np.array([-2.0, 1.0]), np.array([0.25, 2.25])
    mean = float(pi @ mu)  # closed-form moments of the mixture
    second = float(pi @ (var + mu**2))
    assert z.mean() == pytest.approx(mean, abs=0.01)
    assert z.var() == pytest.approx(second - mean**2, abs=0.03)
    assert np.mean(z < -0.5) == pytest.approx(0.25 * 0.9987 + 0.75 * 0.1587, abs=0.005)


def test_ppan_takes_the_expectation_over_components_of_eq_29() -> None:
    g = np.random.default_rng(0)
    x = g.standard_normal((64, 1))
    y = x + 0.5 * g.standard_normal((64, 1))
    adv = GaussianAdversary(1, 1, hidden=(4,))
    ppan = PPAN(_fixed(), adv, squared_error, budget=1.0, lam=5.0, epochs=1, rng=0)
    ppan.fit(y, x, y)
    obs, sens = torch.tensor(y, dtype=torch.float32), torch.tensor(x, dtype=torch.float32)
    z, pi = ppan.mechanism_.components(obs, torch.Generator().manual_seed(1))
    got = ppan.log_likelihood(sens, (z, pi))
    by_hand = sum(pi[:, c] * ppan.adversary_.log_likelihood(sens, z[:, c]) for c in range(2))
    assert torch.allclose(got, by_hand, atol=1e-6)
    assert z.shape == (64, 2, 1) and torch.allclose(pi.sum(1), torch.ones(64))
    with pytest.raises(ValidationError, match="`gamma` must be 0 with a mixture"):
        PPAN(_fixed(), adv, squared_error, gamma=1.0, discriminator=torch.nn.Linear(1, 1)).fit(
            y, x, y
        )


@pytest.mark.slow  # > 10 s on the shared 2-core machine
def test_mixture_ppan_meets_the_budget_and_approaches_prop_1() -> None:
    x, y = gaussian_pair(3000, rho=0.85, rng=0)
    xt, yt = gaussian_pair(3000, rho=0.85, rng=1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        mech = GaussianMixtureMechanism(1, 1, n_components=2, hidden=(5, 5))
        adv = GaussianAdversary(1, 1, hidden=(5, 5))
    ppan = PPAN(
        mech,
        adv,
        squared_error,
        budget=0.4,
        lam=50.0,
        epochs=40,
        batch_size=200,
        adversary_steps=3,
        lr=3e-3,
        adversary_lr=3e-3,
        rng=0,
    ).fit(y, x, y)
    z = ppan.release(yt, rng=2)
    dist = float(((yt - z) ** 2).mean())
    excess = gaussian_mi(xt, z) - theory.gaussian_useful_data(dist, rho=0.85)
    assert 0.3 <= dist <= 0.4 + 0.02  # uses the budget, and keeps it on held-out data
    assert -0.02 <= excess <= 0.1  # the optimum (Prop. 1) is Gaussian: a mixture can reach it
