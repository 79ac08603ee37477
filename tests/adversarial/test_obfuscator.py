"""The MI-trained location obfuscator (Romanelli et al.) and its batch mutual information."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from privwatch import ValidationError
from privwatch import measures as m
from privwatch.adversarial import Obfuscator, batch_mutual_information
from privwatch.adversarial._obfuscator import _generator_module
from privwatch.estimators import bayes_error_grid
from privwatch.mechanisms import PlanarLaplace


def test_batch_mutual_information_is_the_mi_of_the_batch_joint() -> None:
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (200,), generator=g)
    t = torch.nn.functional.one_hot(labels, 3).float()
    q = torch.softmax(torch.randn(200, 3, generator=g, dtype=torch.float64) + 2 * t, dim=1)
    q.requires_grad_(True)
    mi = batch_mutual_information(t.double(), q)
    joint = (t.double().T @ q / 200).detach().numpy()
    assert float(mi.detach()) == pytest.approx(m.mutual_information(joint), abs=1e-5)
    mi.backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()


def test_g0_is_exactly_the_planar_laplace() -> None:
    gen = _generator_module(torch, (16, 16), 3)
    eps = math.log(2) / 100
    gen.epsilon.fill_(eps)
    w = torch.zeros(20_000, 2)
    u = torch.rand(20_000, 3, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        z = gen(w, u).double().numpy()
    r = np.linalg.norm(z, axis=1)
    assert stats.kstest(r, stats.gamma(a=2, scale=1 / eps).cdf).pvalue > 1e-3
    angles = np.arctan2(z[:, 1], z[:, 0])
    assert stats.kstest(angles, stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 1e-3


def _two_users(n: int, rng: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(rng)
    users = np.repeat([0, 1], n)
    centres = np.array([[-50.0, 0.0], [50.0, 0.0]])
    return centres[users] + g.normal(0, 5, (2 * n, 2)), users


def test_learned_mechanism_beats_laplace_within_budget_on_held_out_points() -> None:
    # two users 100 m apart, budget 60 m: meeting half-way (50 m each) mixes them completely
    train, users = _two_users(300, 0)
    test, test_users = _two_users(200, 1)
    ob = Obfuscator(
        60.0,
        max_iter=25,
        patience=25,
        hits=4,
        classifier_epochs=15,
        generator_epochs=40,
        generator_batch_size=256,
        generator_lr=1e-3,
        generator_hidden=(32, 32),
        classifier_hidden=(32, 32),
        rng=0,
    ).fit(train, users)
    src = np.repeat(test, 20, axis=0)
    lab = np.repeat(test_users, 20)
    z = ob.sample(src, rng=2)
    bounds = (-400, 400, -400, 400)
    learned = bayes_error_grid(z, lab, bounds=bounds, cells=40)
    lap = PlanarLaplace.epsilon_for_distortion(60.0).sample(src, rng=3)
    laplace = bayes_error_grid(lap, lab, bounds=bounds, cells=40)
    assert np.linalg.norm(z - src, axis=1).mean() <= 60.0 * 1.02
    assert learned > laplace + 0.1
    assert ob.val_accuracy_ < 0.75 and len(ob.history_) == ob.n_iter_ >= ob.best_iteration_


def test_save_load_round_trip_and_callback(tmp_path) -> None:
    train, users = _two_users(60, 0)
    seen = []
    ob = Obfuscator(
        60.0,
        max_iter=2,
        hits=2,
        classifier_epochs=1,
        generator_epochs=1,
        generator_hidden=(8,),
        classifier_hidden=(8,),
        rng=0,
        callback=lambda rec, est: seen.append((rec.iteration, est.sample(train[:3], rng=0))),
    ).fit(train, np.where(users == 0, "alice", "bob"))
    assert [i for i, _ in seen] == [1, 2] and seen[0][1].shape == (3, 2)
    ob.save(tmp_path / "ob.json")
    back = Obfuscator.load(tmp_path / "ob.json")
    assert np.array_equal(back.sample(train, rng=5), ob.sample(train, rng=5))
    assert back.users_.tolist() == ["alice", "bob"] and back.history_ == ob.history_


def test_cross_entropy_option_runs_and_bad_inputs() -> None:
    train, users = _two_users(40, 0)
    Obfuscator(
        60.0,
        loss="cross_entropy",
        max_iter=2,
        hits=1,
        classifier_epochs=1,
        generator_epochs=1,
        rng=0,
    ).fit(train, users)
    with pytest.raises(ValidationError, match="`loss` must be one of"):
        Obfuscator(60.0, loss="hinge").fit(train, users)
    with pytest.raises(ValidationError, match="`budget` must be a positive"):
        Obfuscator(-1.0).fit(train, users)
    with pytest.raises(ValidationError, match="`noise_dim` must be an int >= 3"):
        Obfuscator(60.0, noise_dim=2).fit(train, users)
    with pytest.raises(ValidationError, match=r"`points` must be a finite, non-empty \(n, 2\)"):
        Obfuscator(60.0).fit(train[:, :1], users)
    with pytest.raises(ValidationError, match="`users` must have one label per point"):
        Obfuscator(60.0).fit(train, users[:3])
    with pytest.raises(ValidationError, match="`users` must hold at least 2 users"):
        Obfuscator(60.0).fit(train, np.zeros(len(train)))
