"""PPAN with a mutual-information utility (Tripathy, Wang, Ishwar App. D): the privacy funnel
on a small discrete model against its exact optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from privwatch import ValidationError
from privwatch.adversarial import (
    PPAN,
    CategoricalAdversary,
    GaussianAdversary,
    MatrixMechanism,
    UsefulPosterior,
)
from privwatch.adversarial._stacked import can_stack
from privwatch.measures import mutual_information

#: p[s, u]: u = 0 goes with s = 0, u = 2 with s = 1, u = 1 leans on neither strongly
P = np.array([[0.30, 0.10, 0.05], [0.05, 0.15, 0.35]])
LAM = 0.6


def _funnel(k: np.ndarray) -> float:
    """I(S; R) - lambda I(U; R) of the channel k[u, r] on the true pmf."""
    utility = mutual_information(P.sum(axis=0)[:, None] * k)
    return float(mutual_information(P @ k) - LAM * utility)


def _exact_optimum() -> float:
    """Minimum of the funnel objective over every 3 x 2 channel, on a grid of step 0.01 per
    row (the objective is concave in each row here, so the optimum is a vertex of the grid)."""
    g = np.linspace(0.0, 1.0, 101)
    a = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)  # P(R = 0 | u)
    k = np.stack([a, 1 - a], axis=-1)  # (N, 3, 2)

    def mi(joint: np.ndarray) -> np.ndarray:
        rows, cols = joint.sum(-1, keepdims=True), joint.sum(-2, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = joint * np.log(joint / (rows * cols))
        return np.asarray(np.nansum(terms, axis=(-1, -2)))

    js = np.einsum("su,nur->nsr", P, k)
    ju = P.sum(axis=0)[None, :, None] * k
    return float((mi(js) - LAM * mi(ju)).min())


def _ppan(seed: int, epochs: int = 150) -> PPAN:
    with torch.random.fork_rng(devices=[]):  # the user's modules, seeded
        torch.manual_seed(seed)
        mech = MatrixMechanism(3, 2)
        torch.nn.init.normal_(mech.logits, std=0.5)
        adversary = CategoricalAdversary(2, 2)
        useful = UsefulPosterior(CategoricalAdversary(2, 3), finite=True)
    return PPAN(
        mech,
        adversary,
        useful,
        penalty="lagrangian",
        lam=LAM,
        epochs=epochs,
        batch_size=2000,
        lr=0.1,
        adversary_lr=0.2,
        adversary_steps=3,
        rng=seed,
    )


def _samples(n: int) -> tuple[np.ndarray, np.ndarray]:
    flat = np.random.default_rng(0).choice(P.size, size=n, p=P.ravel())
    return flat // 3, flat % 3  # sensitive, useful (= observed: the privacy funnel)


def test_finite_useful_posterior_is_the_exact_expected_log_loss() -> None:
    q = UsefulPosterior(CategoricalAdversary(2, 3), finite=True)
    rows = torch.tensor([[0.2, 0.8], [1.0, 0.0]])
    useful = torch.tensor([2, 0])
    with torch.no_grad():
        log_q = torch.log_softmax(q.posterior.net.weight.T, dim=1)  # Q(u | r), (2, 3)
        expect = [-(0.2 * log_q[0, 2] + 0.8 * log_q[1, 2]), -log_q[0, 0]]
        assert torch.allclose(q(useful, rows), torch.stack(expect))
    sampled = UsefulPosterior(GaussianAdversary(2, 1, hidden=(3,)))
    z, u = torch.zeros(4, 2), torch.zeros(4, 1)
    assert torch.allclose(sampled(u, z), -sampled.posterior.log_likelihood(u, z))
    with pytest.raises(ValidationError, match="`posterior` must have log_posterior"):
        UsefulPosterior(GaussianAdversary(2, 1), finite=True)


def test_ppan_trains_a_copy_of_the_useful_posterior_and_does_not_stack_it() -> None:
    sensitive, useful = _samples(400)
    ppan = _ppan(0, epochs=3)
    given: UsefulPosterior = ppan.distortion  # type: ignore[assignment]
    before = [p.detach().clone() for p in given.parameters()]
    ppan.fit(useful, sensitive, useful)
    trained: UsefulPosterior = ppan.distortion_  # type: ignore[assignment]
    assert trained is not given
    after = list(trained.parameters())
    assert not any(torch.equal(a, b) for a, b in zip(before, after, strict=True))  # trained
    assert all(torch.equal(a, b) for a, b in zip(before, given.parameters(), strict=True))
    assert not can_stack([_ppan(0), _ppan(1)], [(useful, sensitive, useful)] * 2)


@pytest.mark.slow  # 3 fits of 150 full-batch epochs: ~40 s on the loaded 2-core machine
def test_privacy_funnel_reaches_the_exact_optimum() -> None:
    sensitive, useful = _samples(2000)
    optimum = _exact_optimum()  # -0.3357: release 1{u = 1}, a merge of u = 0 and u = 2
    assert optimum < -0.3
    fits = [_ppan(seed).fit(useful, sensitive, useful) for seed in range(3)]

    def loss(p: PPAN) -> float:  # the trained variational objective, on training data only
        last = p.history_[-1]
        return last["log_likelihood"] + LAM * last["distortion"]

    best = min(fits, key=loss)  # restarts: the funnel is not convex (local optima exist)
    k = best.channel()
    assert optimum - 1e-9 <= _funnel(k) <= optimum + 0.005
    # the two variational terms match the exact entropies of the learned channel
    joint_sr, joint_ur = P @ k, P.sum(axis=0)[:, None] * k
    h_s_given_r = -float(np.sum(joint_sr * np.log(joint_sr / joint_sr.sum(0))))
    h_u_given_r = -float(
        np.sum(joint_ur[joint_ur > 0] * np.log((joint_ur / joint_ur.sum(0))[joint_ur > 0]))
    )
    assert best.history_[-1]["log_likelihood"] == pytest.approx(-h_s_given_r, abs=0.03)
    assert best.history_[-1]["distortion"] == pytest.approx(h_u_given_r, abs=0.03)
    assert math.isfinite(loss(best))
