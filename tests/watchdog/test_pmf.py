"""Watchdog on known pmfs: the theorems of Hsu et al. (Prop. 2, eq. 11) and Sadeghi et al.
(Thm. 1, Cor. 1, eq. 9-14) as properties on random pmfs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from privwatch import ValidationError
from privwatch import measures as m
from privwatch import watchdog as wd
from tests.conftest import joints


def _eps_inside(p: np.ndarray, frac: float) -> float:
    crit = wd.critical_epsilons(p)
    return float(crit.min() + frac * (crit.max() - crit.min()))


@given(joints(max_x=8), st.floats(0.0, 1.0), st.sampled_from(["merge", "uniform"]))
def test_channel_realizes_optimal_epsilon(p: np.ndarray, frac: float, rand: str) -> None:
    eps = _eps_inside(p, frac)
    k = wd.watchdog_channel(p, eps, rand)
    realized = m.lift_epsilon((p @ k) / (p @ k).sum())
    opt = wd.optimal_epsilon(p, eps)
    assert realized == pytest.approx(opt.effective_epsilon, abs=1e-9)
    assert wd.gamma_bound(p, eps) >= opt.effective_epsilon - 1e-12


@given(joints(max_x=8), st.floats(0.0, 1.0))
def test_utility_matches_mutual_information_of_release(p: np.ndarray, frac: float) -> None:
    eps = _eps_inside(p, frac)
    px = p.sum(axis=0)
    for rand in ("merge", "uniform"):
        k = wd.watchdog_channel(p, eps, rand)
        u = wd.watchdog_utility(p, eps)
        assert u.utility_mi == pytest.approx(m.mutual_information(px[:, None] * k), abs=1e-12)
        assert u.nmil == pytest.approx(m.nmil(px, k), abs=1e-12)


@given(st.data())
def test_no_randomization_beats_invariant_one(data: st.DataObject) -> None:
    """Sadeghi Cor. 1: any randomization of the flagged set, invariant or not, realizes a level
    at least the optimal one; custom invariant R distributions attain it exactly."""
    p = data.draw(joints(max_x=7))
    eps = _eps_inside(p, data.draw(st.floats(0.0, 0.99)))
    keep = wd.partition(p, eps)
    flagged = np.flatnonzero(~keep)
    assume(flagged.size >= 2)
    opt = wd.optimal_epsilon(p, eps).effective_epsilon
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    n = p.shape[1]
    for _ in range(5):
        k = np.eye(n)
        # arbitrary (non-invariant) rows for flagged inputs, supported anywhere in X^c
        rows = rng.dirichlet(np.ones(flagged.size), size=flagged.size)
        k[flagged] = 0.0
        k[np.ix_(flagged, flagged)] = rows
        q = p @ k
        assert m.lift_epsilon(q / q.sum()) >= opt - 1e-9
        r = np.zeros(n)
        r[flagged] = rng.dirichlet(np.ones(flagged.size))
        q = p @ wd.watchdog_channel(p, eps, r)
        assert m.lift_epsilon(q / q.sum()) == pytest.approx(opt, abs=1e-9)


@given(
    joints(max_x=8),
    st.floats(0.0, 1.0),
    st.sampled_from([0.0, 0.01, 0.05, 0.2]),
    st.sampled_from([math.inf, 1.0, 2.0]),
)
def test_relaxed_watchdog_conditions_and_nmil(
    p: np.ndarray, frac: float, delta: float, eps_max: float
) -> None:
    eps = _eps_inside(p, frac)
    r = wd.relaxed_watchdog(p, eps, delta, eps_max)
    strict_keep = wd.partition(p, eps)
    assert r.nmil <= wd.watchdog_utility(p, eps).nmil + 1e-12
    assert r.strict_nmil == pytest.approx(wd.watchdog_utility(p, eps).nmil)
    assert np.all(r.keep[strict_keep])  # exemptions only add released symbols
    # the reported numbers are the true ones of the output partition
    assert r.breach_probability == pytest.approx(wd.breach_probability(p, r.keep, eps))
    k = wd.partition_channel(p.shape[1], r.keep)
    q = p @ k
    assert r.effective_epsilon == pytest.approx(m.lift_epsilon(q / q.sum()), abs=1e-9)
    strict_ok = (
        wd.breach_probability(p, strict_keep, eps) <= delta
        and wd.optimal_epsilon(p, eps).effective_epsilon <= eps_max
    )
    if strict_ok:
        assert r.satisfied
    if r.satisfied:
        assert r.breach_probability <= delta + 1e-12
        assert r.effective_epsilon <= eps_max + 1e-12


def test_relaxation_helps_on_a_hand_made_pmf() -> None:
    # x0 and x1 leak in opposite directions; merged they leak nothing (|i(s, {x0, x1})| = 0).
    # Each has breach probability 0.06 (both of its cells exceed eps = 0.15).
    p = np.array([[0.01, 0.05, 0.22, 0.22], [0.05, 0.01, 0.22, 0.22]])
    strict = wd.watchdog_utility(p, 0.15)
    assert strict.nmil > 0.05
    tight = wd.relaxed_watchdog(p, 0.15, delta=0.1)  # any exemption breaches 0.12 > 0.1
    assert tight.exempted == [] and tight.nmil == pytest.approx(strict.nmil)
    loose = wd.relaxed_watchdog(p, 0.15, delta=0.15)
    assert loose.exempted == [0, 1]
    assert loose.breach_probability == pytest.approx(0.12)
    assert loose.nmil == pytest.approx(0.0, abs=1e-12) and loose.nmil < strict.nmil
    capped = wd.relaxed_watchdog(p, 0.15, delta=0.15, epsilon_max=1.0)  # omega(x_i) = log 3
    assert capped.exempted == [] and capped.satisfied


def test_critical_epsilons_define_the_partition_chain() -> None:
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(24)).reshape(3, 8)
    crit = wd.critical_epsilons(p)
    assert np.all(np.diff(crit) < 0)
    assert wd.partition(p, crit[0]).all()
    sizes = [wd.partition(p, e).sum() for e in crit]
    assert sizes == sorted(sizes, reverse=True)
    assert wd.partition(p, crit[0] - 1e-9).sum() < p.shape[1]


def test_gamma_bound_by_hand() -> None:
    p = np.array([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]])
    # X_eps = {x2}: P(X_eps) = 0.2, P(X^c) = 0.8; eps = 0.5
    e = math.exp(0.5)
    upper = math.log((1 - e * 0.2 + e) / 0.8)
    lower = -math.log((1 - e * 0.2) / 0.8)
    assert wd.gamma_bound(p, 0.5) == pytest.approx(max(upper, lower))
    assert wd.gamma_bound(p, 10.0) == 10.0  # nothing flagged
    assert wd.gamma_bound(np.array([[0.05, 0.45], [0.45, 0.05]]), 0.01) >= 0


def test_tradeoff_curve_fields_and_exact_release_leakage() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(30)).reshape(3, 10)
    eps = np.linspace(0.05, 2.0, 7)
    curve = wd.tradeoff(p, eps)
    frame = curve.to_frame()
    assert len(frame) == 7
    assert np.all(np.diff(curve.utility_mi) >= -1e-12)  # utility grows with epsilon
    for i, e in enumerate(eps):
        rel = curve.leakage[i]
        assert rel.lift_epsilon == pytest.approx(curve.effective_epsilon[i], abs=1e-9)
        assert rel.mutual_information <= rel.lift_epsilon + 1e-12
        assert curve.gamma_bound[i] >= curve.effective_epsilon[i] - 1e-12
        assert curve.utility_mi[i] == pytest.approx(wd.watchdog_utility(p, e).utility_mi)
    assert "release_maximal_leakage" in frame.columns
    assert set(curve.to_dict()) == set(frame.columns)


def test_bad_inputs() -> None:
    p = np.array([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]])
    with pytest.raises(ValidationError, match="`epsilon` must be a non-negative number; got -1"):
        wd.partition(p, -1)
    with pytest.raises(ValidationError, match="`randomization` must be 'merge', 'uniform'"):
        wd.watchdog_channel(p, 0.5, "shuffle")
    with pytest.raises(ValidationError, match="supported on the flagged symbols"):
        wd.watchdog_channel(p, 0.5, [0.0, 0.0, 1.0])
    with pytest.raises(ValidationError, match="one entry per observed symbol"):
        wd.watchdog_channel(p, 0.5, [0.5, 0.5])
    with pytest.raises(ValidationError, match="`delta` must be a number in \\[0, 1\\]; got 2"):
        wd.relaxed_watchdog(p, 0.5, 2)
    with pytest.raises(ValidationError, match="`epsilon_max` must be a non-negative"):
        wd.relaxed_watchdog(p, 0.5, 0.1, -3)
    with pytest.raises(ValidationError, match="`keep` must be a boolean vector of length 3"):
        wd.breach_probability(p, [True], 0.5)
    with pytest.raises(ValidationError, match="`epsilons` must be a non-negative"):
        wd.tradeoff(p, [0.1, float("nan")])
    with pytest.raises(ValidationError, match="`p` must sum to 1"):
        wd.gamma_bound(p * 2, 0.5)
