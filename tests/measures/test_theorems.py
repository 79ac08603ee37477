"""Theorems of the papers as Hypothesis properties on random pmfs and channels.

Hsu, Asoodeh, Calmon, Lemma 1 and Prop. 1: with eps = lift_epsilon(p), I(S;X) <= eps,
P_{S|X} is 2 eps-LDP, Sibson/Arimoto I_alpha <= alpha/(alpha-1) eps, maximal leakage <= eps,
P_c <= p*_S e^eps, I_f <= sup over [e^-eps, e^eps] of f. Plus limits and data processing.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from privwatch import measures as m
from tests.conftest import channels, joints

TOL = 1e-10


@given(joints())
def test_mi_below_lift_epsilon(p: np.ndarray) -> None:
    assert m.mutual_information(p) <= m.lift_epsilon(p) + TOL


@given(joints())
def test_posterior_channel_is_2eps_ldp(p: np.ndarray) -> None:
    post = (p / p.sum(axis=0)).T  # rows indexed by x
    assert m.ldp_epsilon(post) <= 2 * m.lift_epsilon(p) + TOL


@given(joints(), st.floats(1.05, 50.0))
def test_alpha_mi_bounds(p: np.ndarray, alpha: float) -> None:
    eps = m.lift_epsilon(p)
    bound = alpha / (alpha - 1) * eps
    assert m.sibson_mi(p, alpha) <= bound + TOL
    assert m.arimoto_mi(p, alpha) <= bound + TOL


@given(joints())
def test_maximal_leakage_and_guessing_bounds(p: np.ndarray) -> None:
    eps = m.lift_epsilon(p)
    assert m.maximal_leakage(p) <= eps + TOL
    assert m.guessing_probability(p) <= p.sum(axis=1).max() * math.exp(eps) + TOL
    assert m.bayes_leakage(p) <= eps + TOL


@given(joints(), st.sampled_from(["kl", "chi2", "tv", "hellinger"]))
def test_f_information_bound(p: np.ndarray, name: str) -> None:
    eps = m.lift_epsilon(p)
    f = m.F_FUNCTIONS[name]
    grid = np.concatenate(
        [np.linspace(math.exp(-eps), math.exp(eps), 2001), [math.exp(-eps), math.exp(eps)]]
    )
    assert m.f_information(p, name) <= float(np.max(f(grid))) + TOL


@given(joints())
def test_alpha_to_one_tends_to_mi(p: np.ndarray) -> None:
    mi = m.mutual_information(p)
    for a in (1 - 1e-6, 1 + 1e-6):
        assert abs(m.sibson_mi(p, a) - mi) < 1e-5
        assert abs(m.arimoto_mi(p, a) - mi) < 1e-5


@given(joints())
def test_sibson_monotone_in_alpha_up_to_maximal_leakage(p: np.ndarray) -> None:
    values = [m.sibson_mi(p, a) for a in (0.5, 1.0, 2.0, 5.0, 20.0)]
    assert all(a <= b + TOL for a, b in itertools.pairwise(values))
    assert values[-1] <= m.maximal_leakage(p) + TOL


@given(st.data())
def test_data_processing_inequality(data: st.DataObject) -> None:
    p = data.draw(joints(full_support=False))
    k = data.draw(channels(p.shape[1]))
    q = p @ k
    q = q / q.sum()
    assert m.mutual_information(q) <= m.mutual_information(p) + TOL
    assert m.maximal_leakage(q) <= m.maximal_leakage(p) + TOL
    assert m.guessing_probability(q) <= m.guessing_probability(p) + TOL


@given(joints(full_support=False))
def test_mi_nonnegative_and_symmetric(p: np.ndarray) -> None:
    assert m.mutual_information(p) >= 0
    assert abs(m.mutual_information(p) - m.mutual_information(p.T)) < 1e-12


@given(joints())
def test_subset_log_lift_of_singletons_is_log_lift(p: np.ndarray) -> None:
    ll = m.log_lift(p)
    for x in range(p.shape[1]):
        mask = np.zeros(p.shape[1], dtype=bool)
        mask[x] = True
        assert np.allclose(m.subset_log_lift(p, mask), ll[:, x])
