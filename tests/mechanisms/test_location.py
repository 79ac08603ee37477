"""Planar Laplace, the exact Bayes-optimal mechanism, grid Bayes error, location data sets."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from privwatch import ValidationError
from privwatch import measures as m
from privwatch.datasets import load_gowalla_paris, synthetic_users
from privwatch.estimators import bayes_error_grid
from privwatch.mechanisms import PlanarLaplace, optimal_bayes_mechanism


def test_planar_laplace_radius_is_gamma_and_angle_uniform() -> None:
    mech = PlanarLaplace.epsilon_for_distortion(270.0)
    r = mech.radii(20_000, rng=0)
    assert stats.kstest(r, stats.gamma(a=2, scale=1 / mech.epsilon).cdf).pvalue > 1e-3
    assert r.mean() == pytest.approx(270.0, rel=0.03)
    pts = np.zeros((20_000, 2))
    z = mech.release(pts, rng=1)
    assert np.linalg.norm(z, axis=1).mean() == pytest.approx(270.0, rel=0.03)
    assert np.abs(z.mean(axis=0)).max() < 10.0  # isotropic: no drift
    angles = np.arctan2(z[:, 1], z[:, 0])
    assert stats.kstest(angles, stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 1e-3
    assert np.array_equal(mech.release(pts[:5], rng=3), mech.release(pts[:5], rng=3))
    assert mech.privacy.measure == "geo_epsilon" and mech.privacy.value == mech.epsilon
    assert mech.density([[0, 0]], [[0, 0]])[0] == pytest.approx(mech.epsilon**2 / (2 * math.pi))


def test_planar_laplace_bad_inputs() -> None:
    with pytest.raises(ValidationError, match="`epsilon` must be a positive finite number"):
        PlanarLaplace(0)
    with pytest.raises(ValidationError, match="`distortion` must be a positive"):
        PlanarLaplace.epsilon_for_distortion(-5)
    with pytest.raises(ValidationError, match=r"`observed` must be a finite \(n, 2\) array"):
        PlanarLaplace(0.1).release(np.zeros((3, 3)))
    with pytest.raises(ValidationError, match="`PlanarLaplace` must have a finite output"):
        PlanarLaplace(0.1).channel()


def _random_instance(seed: int, n_x: int = 3, n_w: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(n_x * n_w)).reshape(n_x, n_w)
    loc = rng.uniform(0, 100, (n_w, 2))
    dist = np.linalg.norm(loc[:, None] - loc[None], axis=-1)
    return prior, dist


@pytest.mark.parametrize("seed", range(4))
def test_optimal_bayes_is_optimal_and_certified(seed: int) -> None:
    prior, dist = _random_instance(seed)
    p_w = prior.sum(axis=0)
    budget = 20.0
    res = optimal_bayes_mechanism(prior, dist, budget)
    assert res.gap < 1e-7
    assert res.distortion <= budget + 1e-7
    k = res.channel()
    assert np.allclose(k.sum(axis=1), 1.0)
    assert res.bayes_error == pytest.approx(m.bayes_error(prior @ k), abs=1e-12)
    assert np.array_equal(res.sparse_channel().toarray(), k)
    assert res.privacy.measure == "bayes_error" and res.privacy.value == res.bayes_error
    rng = np.random.default_rng(100 + seed)
    for _ in range(200):  # random feasible mechanisms never beat it
        k = rng.dirichlet(np.ones(dist.shape[1]) * 0.3, size=dist.shape[0])
        lam = min(1.0, budget / max(float((p_w[:, None] * k * dist).sum()), 1e-12))
        k = lam * k + (1 - lam) * np.eye(dist.shape[0])  # mix with identity to meet the budget
        assert m.bayes_error(prior @ k) <= res.bayes_error + 1e-9


def test_optimal_bayes_limits_and_monotonicity() -> None:
    prior, dist = _random_instance(7)
    errors = [optimal_bayes_mechanism(prior, dist, b).bayes_error for b in (0, 5, 20, 80, 1e4)]
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(errors))
    assert errors[0] == pytest.approx(m.bayes_error(prior), abs=1e-9)  # no budget: release w
    assert errors[-1] == pytest.approx(1 - prior.sum(axis=1).max(), abs=1e-9)  # random guess


def test_optimal_bayes_bad_inputs() -> None:
    prior, dist = _random_instance(1)
    with pytest.raises(ValidationError, match="`distance` must be a finite non-negative array"):
        optimal_bayes_mechanism(prior, dist[:3], 10)
    with pytest.raises(ValidationError, match="`budget` must be a non-negative"):
        optimal_bayes_mechanism(prior, dist, -1)
    with pytest.raises(ValidationError, match="`budget` must allow at least one mechanism"):
        optimal_bayes_mechanism(prior, dist + 5.0, 1.0)
    with pytest.raises(ValidationError, match="`p` must sum to 1"):
        optimal_bayes_mechanism(prior * 2, dist, 10)


def test_grid_bayes_error_is_the_exact_bayes_error_of_cells() -> None:
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 10, (5000, 2))
    labels = (pts[:, 0] + rng.normal(0, 2, 5000) > 5).astype(int)
    cells = 4
    ix = np.minimum((pts / 10 * cells).astype(int), cells - 1)
    cell = ix[:, 0] * cells + ix[:, 1]
    counts = np.zeros((2, cells * cells))
    np.add.at(counts, (labels, cell), 1)
    expected = m.bayes_error(counts / counts.sum())
    assert bayes_error_grid(pts, labels, bounds=(0, 10, 0, 10), cells=cells) == pytest.approx(
        expected
    )
    assert bayes_error_grid(pts, labels, bounds=(0, 10, 0, 10), cells=1) == pytest.approx(
        1 - np.bincount(labels).max() / 5000
    )
    with pytest.raises(ValidationError, match="`labels` must have one label per release"):
        bayes_error_grid(pts, labels[:3], bounds=(0, 10, 0, 10), cells=2)
    with pytest.raises(ValidationError, match="`cells` must be a positive int"):
        bayes_error_grid(pts, labels, bounds=(0, 10, 0, 10), cells=0)
    with pytest.raises(ValidationError, match="`bounds` must be"):
        bayes_error_grid(pts, labels, bounds=(0, 0, 0, 10), cells=2)


def test_location_data_sets() -> None:
    syn = synthetic_users(rng=0)
    h = 150.0
    vertices = np.array([[-h, h], [h, h], [-h, -h], [h, -h]])
    assert np.linalg.norm(syn.train - vertices[syn.train_sensitive], axis=1).max() <= 45.0
    tr, te = syn.normalized()
    assert np.abs(tr).max() < 1 and te.shape == (480, 2)
    gow = load_gowalla_paris(rng=0)
    assert gow.train.shape == (492, 2) and gow.test.shape == (120, 2)  # as in §V
    assert np.abs(np.vstack([gow.train, gow.test])).max() <= 2250.0
    assert np.bincount(gow.test_sensitive).tolist() == [20] * 6


def test_grid_centres_follow_the_cells_of_bayes_error_grid() -> None:
    from privwatch.datasets import uniform_prior
    from privwatch.estimators import grid_centres

    centres = grid_centres((-10, 10, 0, 5), 4)
    # each centre alone in the grid, labelled by its row: every cell holds one label
    assert bayes_error_grid(centres, np.arange(16), bounds=(-10, 10, 0, 5), cells=4) == 0.0
    assert centres[1].tolist() == [-7.5, 1.875]  # row ix * cells + iy
    with pytest.raises(ValidationError, match="`cells` must be a positive int"):
        grid_centres((0, 1, 0, 1), 0)
    with pytest.raises(ValidationError, match="`bounds` must be"):
        grid_centres((1, 0, 0, 1), 2)
    prior = uniform_prior(np.array([1, 0, 1, 1]))
    assert prior.shape == (2, 4) and prior.sum() == pytest.approx(1.0)
    assert (prior > 0).sum(axis=0).tolist() == [1, 1, 1, 1]
