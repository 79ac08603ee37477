"""Column generation for the Bayes-optimal mechanism agrees with the direct LP and certifies."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from privwatch import ValidationError
from privwatch import measures as m
from privwatch.mechanisms import optimal_bayes_mechanism


def _check_in_users(seed: int, n_x: int = 3, n_w: int = 30, n_z: int = 300):
    """Check-ins: every location belongs to one user, outputs are random candidate points."""
    r = np.random.default_rng(seed)
    users = r.integers(0, n_x, n_w)
    centres = r.uniform(0, 100, (n_x, 2))
    loc = centres[users] + r.normal(0, 15, (n_w, 2))
    out = r.uniform(-20, 120, (n_z, 2))
    prior = np.zeros((n_x, n_w))
    prior[users, np.arange(n_w)] = r.dirichlet(np.ones(n_w))
    return prior, np.linalg.norm(loc[:, None] - out[None], axis=-1)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("budget", [8.0, 25.0, 60.0])
def test_column_generation_matches_direct_lp(seed: int, budget: float) -> None:
    prior, dist = _check_in_users(seed)
    direct = optimal_bayes_mechanism(prior, dist, budget, method="direct")
    cg = optimal_bayes_mechanism(prior, dist, budget, method="column_generation", gap_tol=1e-9)
    assert cg.method == "column_generation" and sparse.issparse(cg.sparse_channel())
    assert cg.bayes_error == pytest.approx(direct.bayes_error, abs=1e-7)
    assert cg.gap <= 1e-7 and cg.dual_bound >= direct.bayes_error - 1e-7
    assert cg.distortion <= budget + 1e-6
    k = cg.channel()
    assert isinstance(k, np.ndarray) and isinstance(direct.channel(), np.ndarray)
    assert np.allclose(k.sum(axis=1), 1.0) and (k >= 0).all()
    assert cg.bayes_error == pytest.approx(m.bayes_error(prior @ k), abs=1e-12)
    assert set(cg.support) <= set(np.flatnonzero(k.sum(axis=0) > 0))


@pytest.mark.slow  # the direct LP over 120,000 variables takes about a minute
def test_column_generation_gap_tolerance_is_a_valid_bound() -> None:
    prior, dist = _check_in_users(5, n_x=4, n_w=60, n_z=2000)
    exact = optimal_bayes_mechanism(prior, dist, 20.0, method="direct")
    loose = optimal_bayes_mechanism(prior, dist, 20.0, method="column_generation", gap_tol=0.05)
    # a loose stop returns a feasible mechanism and a bound that still brackets the optimum
    assert loose.bayes_error <= exact.bayes_error + 1e-9 <= loose.dual_bound + 2e-9
    assert loose.gap <= 0.05 + 1e-9


def test_zero_mass_locations_and_auto_method() -> None:
    prior, dist = _check_in_users(2, n_w=40, n_z=1000)
    prior[:, :5] = 0.0
    prior /= prior.sum()
    res = optimal_bayes_mechanism(prior, dist, 25.0)  # 40 000 variables: auto picks colgen
    assert res.method == "column_generation"
    k = res.channel()
    assert np.allclose(k.sum(axis=1), 1.0)
    assert (k[np.arange(5), dist[:5].argmin(axis=1)] == 1.0).all()
    assert res.bayes_error == pytest.approx(
        optimal_bayes_mechanism(prior, dist, 25.0, method="direct").bayes_error, abs=1e-6
    )


def test_column_generation_needs_one_user_per_location() -> None:
    prior = np.full((2, 3), 1 / 6)
    dist = np.ones((3, 4))
    with pytest.raises(ValidationError, match="at most one positive entry per observed value"):
        optimal_bayes_mechanism(prior, dist, 2.0, method="column_generation")
    with pytest.raises(ValidationError, match="`method` must be"):
        optimal_bayes_mechanism(prior, dist, 2.0, method="simplex")


def test_time_limit_returns_a_feasible_mechanism_with_its_certificate() -> None:
    prior, dist = _check_in_users(7, n_x=4, n_w=80, n_z=3000)
    res = optimal_bayes_mechanism(prior, dist, 15.0, method="column_generation", max_seconds=0.0)
    assert not res.converged
    assert res.distortion <= 15.0 + 1e-6
    assert res.dual_bound >= res.bayes_error - 1e-12 and res.gap == res.dual_bound - res.bayes_error
