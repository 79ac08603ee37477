"""Closed-form PPAN tradeoffs checked against direct computation and simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from privwatch import ValidationError
from privwatch import measures as m
from privwatch import theory as t


def symmetric_pair_pmf(m_: int, p: float) -> np.ndarray:
    off = np.full((m_, m_), p / (m_ * (m_ - 1)))
    np.fill_diagonal(off, (1 - p) / m_)
    return off


@pytest.mark.parametrize(("m_", "p"), [(2, 0.1), (10, 0.4), (5, 0.9)])
def test_symmetric_pair_mi_is_the_mi_of_the_pmf(m_: int, p: float) -> None:
    assert t.symmetric_pair_mi(p, m_) == pytest.approx(
        m.mutual_information(symmetric_pair_pmf(m_, p)), abs=1e-12
    )


def test_symmetric_pair_curves() -> None:
    deltas = np.linspace(0, 1, 41)
    full = [t.symmetric_pair_optimum(d, m=10, p=0.4, observation="full") for d in deltas]
    useful = [t.symmetric_pair_optimum(d, m=10, p=0.4, observation="useful") for d in deltas]
    assert full[0] == useful[0] == pytest.approx(t.symmetric_pair_mi(0.4, 10))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(full))  # non-increasing
    assert all(f <= u + 1e-12 for f, u in zip(full, useful, strict=False))  # seeing X never hurts
    assert t.symmetric_pair_optimum(0.5, m=10, p=0.4) == 0.0  # p + delta = 1 - 1/m
    assert t.symmetric_pair_optimum(0.9, m=10, p=0.4, observation="useful") == 0.0
    # p above 1 - 1/m: the second branch of eq. (30) moves p down
    assert t.symmetric_pair_optimum(0.02, m=2, p=0.9) == pytest.approx(t.symmetric_pair_mi(0.88, 2))


def test_symmetric_pair_full_data_is_attained_by_a_mechanism() -> None:
    # W = (X, Y): when Y = X, release a uniform other value with probability a, otherwise
    # release Y. Then Pr[Z != Y] = (1 - p) a = delta and (X, Z) is a symmetric pair with
    # parameter p + delta: its MI must be eq. (30).
    m_, p, delta = 10, 0.4, 0.2
    a = delta / (1 - p)
    joint = symmetric_pair_pmf(m_, p)  # P(x, y)
    p_xz = np.zeros((m_, m_))
    distortion = 0.0
    for x in range(m_):
        for y in range(m_):
            k = np.zeros(m_)
            if y == x:
                k[:] = a / (m_ - 1)
                k[x] = 1 - a
            else:
                k[y] = 1.0
            p_xz[x] += joint[x, y] * k
            distortion += joint[x, y] * (1 - k[y])
    assert distortion == pytest.approx(delta)
    assert m.mutual_information(p_xz) == pytest.approx(
        t.symmetric_pair_optimum(delta, m=m_, p=p), abs=1e-12
    )


def _simulate(mech, rho: float, n: int = 400_000) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    y = rho * x + math.sqrt(1 - rho**2) * rng.standard_normal(n)
    z = mech(x, y, rng)
    c = np.corrcoef(x, z)[0, 1]
    return float(np.mean((y - z) ** 2)), -0.5 * math.log(1 - c * c)


@pytest.mark.parametrize("delta", [0.1, 0.4, 0.7])
def test_gaussian_useful_data_release_attains_the_formula(delta: float) -> None:
    rho = 0.85
    mse, mi = _simulate(
        lambda x, y, r: (1 - delta) * y + r.normal(0, math.sqrt(delta * (1 - delta)), len(y)),
        rho,
    )
    assert mse == pytest.approx(delta, abs=5e-3)
    assert mi == pytest.approx(t.gaussian_useful_data(delta, rho=rho), abs=5e-3)


@pytest.mark.parametrize("delta", [0.1, 0.3, 0.6])
def test_gaussian_full_data_release_attains_the_formula(delta: float) -> None:
    rho = 0.85
    k = math.sqrt(delta * (1 - delta) / (1 - rho**2))
    mse, mi = _simulate(lambda x, y, r: (1 - delta) * y - (x - rho * y) * k, rho)
    assert mse == pytest.approx(delta, abs=5e-3)
    assert mi == pytest.approx(t.gaussian_full_data(delta, rho=rho), abs=5e-3)
    assert t.gaussian_full_data(delta, rho=rho) <= t.gaussian_useful_data(delta, rho=rho)


def test_gaussian_vector_is_the_best_split_of_the_budget() -> None:
    rho = np.array([0.47, 0.24, 0.85, 0.07, 0.66])
    for delta in (0.3, 1.5, 3.0):

        def total(parts: np.ndarray) -> float:
            return sum(
                t.gaussian_useful_data(float(d), rho=float(r))
                for d, r in zip(parts, rho, strict=False)
            )

        best = minimize(
            total,
            np.full(5, delta / 5),
            bounds=[(0, 1)] * 5,
            method="SLSQP",
            constraints=[{"type": "eq", "fun": lambda v, s=delta: v.sum() - s}],
        )
        assert t.gaussian_vector_useful_data(delta, rho=rho) == pytest.approx(best.fun, abs=1e-4)
    assert t.gaussian_vector_useful_data(0.2, rho=[0.85]) == pytest.approx(
        t.gaussian_useful_data(0.2, rho=0.85)
    )
    assert t.gaussian_vector_useful_data(5.0, rho=rho) == 0.0


def test_reverse_waterfilling() -> None:
    var = np.array([1.0, 0.5, 2.0, 0.1, 1.5])
    for D in (0.3, 1.0, 3.0):

        def rate(parts: np.ndarray) -> float:
            return float(np.maximum(0, 0.5 * np.log(var / np.maximum(parts, 1e-12))).sum())

        best = minimize(
            rate,
            np.full(5, D / 5),
            bounds=[(1e-9, v) for v in var],
            method="SLSQP",
            constraints=[{"type": "eq", "fun": lambda v, s=D: v.sum() - s}],
        )
        assert t.gaussian_rate_distortion(D, var) == pytest.approx(best.fun, abs=1e-4)
    assert t.gaussian_rate_distortion(0.0, var) == math.inf
    assert t.gaussian_rate_distortion(var.sum(), var) == 0.0


def test_theory_bad_inputs() -> None:
    with pytest.raises(ValidationError, match="`m` must be an int >= 2"):
        t.symmetric_pair_optimum(0.1, m=1, p=0.2)
    with pytest.raises(ValidationError, match="`observation` must be"):
        t.symmetric_pair_optimum(0.1, m=3, p=0.2, observation="partial")
    with pytest.raises(ValidationError, match="`budget` must be in"):
        t.symmetric_pair_optimum(1.5, m=3, p=0.2)
    with pytest.raises(ValidationError, match="`rho` must be in"):
        t.gaussian_full_data(0.1, rho=-0.2)
    with pytest.raises(ValidationError, match="`variances` must be"):
        t.gaussian_rate_distortion(1.0, [1.0, -1.0])
    with pytest.raises(ValidationError, match="`rho` must be a non-empty list"):
        t.gaussian_vector_useful_data(1.0, rho=[0.0, 0.5])


@pytest.mark.parametrize("bad", [1 + 1j, "0.3", [0.1, 0.2], True])
def test_theory_refuses_non_numbers(bad: object) -> None:
    with pytest.raises(ValidationError, match="`p` must be"):
        t.symmetric_pair_mi(bad, 3)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`p` must be"):
        t.symmetric_pair_optimum(0.1, m=3, p=bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`rho` must be"):
        t.gaussian_useful_data(0.1, rho=bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`rho` must be"):
        t.gaussian_full_data(0.1, rho=bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="`variances` must be"):
        t.gaussian_rate_distortion(0.5, ["a", "b"])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="`variances` must be"):
        t.gaussian_rate_distortion(0.5, [1e308, 1e308])
    with pytest.raises(ValidationError, match="`rho` must be"):
        t.gaussian_vector_useful_data(0.5, rho=[0.5 + 1j])
