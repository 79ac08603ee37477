"""Textbook values of every measure, computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privwatch import measures as m

INDEPENDENT = np.outer([0.3, 0.7], [0.2, 0.5, 0.3])
DIAGONAL = np.diag([0.2, 0.3, 0.5])  # perfectly correlated
SYM = np.array([[0.4, 0.1], [0.1, 0.4]])
Z3 = np.array([[1 / 3, 0, 0], [0, 1 / 6, 1 / 6], [0, 1 / 6, 1 / 6]])


def test_independent_pmf_leaks_nothing() -> None:
    r = m.leakage_report(INDEPENDENT)
    for name in (
        "mutual_information",
        "lift_epsilon",
        "sibson_mi",
        "arimoto_mi",
        "maximal_leakage",
        "kl_information",
        "chi2_information",
        "tv_information",
        "hellinger_information",
        "bayes_leakage",
        "ldp_epsilon",
    ):
        assert getattr(r, name) == pytest.approx(0.0, abs=1e-12), name
    assert r.guessing_probability == pytest.approx(0.7)
    assert np.allclose(m.lift(INDEPENDENT), 1.0)


def test_perfect_correlation_mi_equals_entropy() -> None:
    h = -sum(q * math.log(q) for q in (0.2, 0.3, 0.5))
    assert m.mutual_information(DIAGONAL) == pytest.approx(h)
    assert m.entropy(DIAGONAL.sum(axis=1)) == pytest.approx(h)
    assert m.guessing_probability(DIAGONAL) == pytest.approx(1.0)
    assert m.bayes_error(DIAGONAL) == pytest.approx(0.0, abs=1e-15)
    assert m.maximal_leakage(DIAGONAL) == pytest.approx(math.log(3))  # log |X|
    assert m.bayes_leakage(DIAGONAL) == pytest.approx(math.log(1 / 0.5))
    assert m.lift_epsilon(DIAGONAL) == math.inf  # off-diagonal cells are impossible


def test_symmetric_2x2_by_hand() -> None:
    # p_s = p_x = (1/2, 1/2); lift 1.6 on the diagonal, 0.4 off it.
    assert m.lift(SYM) == pytest.approx(np.array([[1.6, 0.4], [0.4, 1.6]]))
    mi = 0.8 * math.log(1.6) + 0.2 * math.log(0.4)
    assert m.mutual_information(SYM) == pytest.approx(mi)
    assert m.mutual_information(SYM, base=2) == pytest.approx(mi / math.log(2))
    assert m.lift_epsilon(SYM) == pytest.approx(math.log(2.5))
    assert m.maximal_leakage(SYM) == pytest.approx(math.log(1.6))
    # Sibson and Arimoto of order 2 coincide here: 2 log(2 sqrt(0.5 (0.8^2 + 0.2^2)))
    i2 = 2 * math.log(2 * math.sqrt(0.5 * (0.64 + 0.04)))
    assert m.sibson_mi(SYM, 2) == pytest.approx(i2)
    assert m.arimoto_mi(SYM, 2) == pytest.approx(i2)
    assert m.f_information(SYM, "tv") == pytest.approx(0.3)
    assert m.f_information(SYM, "chi2") == pytest.approx(0.36)
    hell = 0.5 * ((math.sqrt(1.6) - 1) ** 2 + (math.sqrt(0.4) - 1) ** 2)
    assert m.f_information(SYM, "hellinger") == pytest.approx(hell)
    assert m.f_information(SYM, "kl") == pytest.approx(mi)
    assert m.guessing_probability(SYM) == pytest.approx(0.8)
    assert m.bayes_error(SYM) == pytest.approx(0.2)
    assert m.bayes_leakage(SYM) == pytest.approx(math.log(1.6))
    assert m.ldp_epsilon(np.array([[0.8, 0.2], [0.2, 0.8]])) == pytest.approx(math.log(4))
    assert m.subset_log_lift(SYM, [True, False]) == pytest.approx([math.log(1.6), math.log(0.4)])


def test_3x3_with_impossible_cells_by_hand() -> None:
    assert m.mutual_information(Z3) == pytest.approx(math.log(3) - 2 / 3 * math.log(2))
    ll = m.log_lift(Z3)
    assert ll[0, 0] == pytest.approx(math.log(3))
    assert ll[1, 1] == pytest.approx(math.log(1.5))
    assert ll[0, 1] == -math.inf
    assert m.lift_epsilon(Z3) == math.inf
    assert m.guessing_probability(Z3) == pytest.approx(2 / 3)
    assert m.maximal_leakage(Z3) == pytest.approx(math.log(2))
    assert m.sibson_mi(Z3, math.inf) == pytest.approx(math.log(2))
    assert m.bayes_leakage(Z3) == pytest.approx(math.log(2))
    assert m.arimoto_mi(Z3, math.inf) == pytest.approx(math.log(2))
    # subset {1, 2}: P(A|s) = (0, 1, 1), P(A) = 2/3
    assert m.subset_log_lift(Z3, [False, True, True]) == pytest.approx(
        [-math.inf, math.log(1.5), math.log(1.5)]
    )


def test_support_convention_nan_outside() -> None:
    p = np.array([[0.5, 0.0, 0.0], [0.25, 0.25, 0.0]])  # x = 2 never occurs
    ll = m.log_lift(p)
    assert np.isnan(ll[:, 2]).all()
    assert ll[0, 1] == -math.inf
    assert m.lift_epsilon(p) == math.inf
    assert np.isnan(m.subset_log_lift(p, [False, False, True])).all()


def test_full_support_3x3_lift_epsilon_by_hand() -> None:
    p = np.array([[0.1, 0.1, 0.1], [0.05, 0.1, 0.15], [0.15, 0.1, 0.15]])
    p = p / p.sum()
    p_s, p_x = p.sum(1), p.sum(0)
    expected = max(abs(math.log(p[i, j] / (p_s[i] * p_x[j]))) for i in range(3) for j in range(3))
    assert m.lift_epsilon(p) == pytest.approx(expected)


def test_nmil_extremes_and_merge() -> None:
    px = np.array([0.25, 0.25, 0.5])
    assert m.nmil(px, np.eye(3)) == 0.0
    assert m.nmil(px, np.ones((3, 2)) / 2) == pytest.approx(1.0)
    merge = np.array([[1, 0], [1, 0], [0, 1]])  # I(X;Y) = H(1/2, 1/2) = log 2
    h = -(2 * 0.25 * math.log(0.25) + 0.5 * math.log(0.5))
    assert m.nmil(px, merge) == pytest.approx(1 - math.log(2) / h)
    assert m.nmil([1.0, 0.0], np.eye(2)) == 0.0


def test_alpha_limits_dispatch() -> None:
    assert m.sibson_mi(SYM, 1) == pytest.approx(m.mutual_information(SYM))
    assert m.arimoto_mi(SYM, 1) == pytest.approx(m.mutual_information(SYM))
    assert m.sibson_mi(SYM, math.inf) == pytest.approx(m.maximal_leakage(SYM))
    assert m.arimoto_mi(SYM, math.inf) == pytest.approx(m.bayes_leakage(SYM))


def test_alpha_below_one_is_defined() -> None:
    for a in (0.25, 0.5, 0.9):
        assert 0 < m.sibson_mi(SYM, a) < m.mutual_information(SYM)
        assert 0 < m.arimoto_mi(SYM, a) < m.mutual_information(SYM)


def test_large_alpha_is_stable() -> None:
    v = m.sibson_mi(SYM, 1e6)
    assert math.isfinite(v)
    assert v == pytest.approx(m.maximal_leakage(SYM), abs=1e-5)


def test_callable_f() -> None:
    assert m.f_information(SYM, lambda t: (t - 1.0) ** 2) == pytest.approx(0.36)
