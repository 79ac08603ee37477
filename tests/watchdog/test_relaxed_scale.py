"""relaxed_watchdog in O(|X| log |X|): identical to the quadratic definition it replaced."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from privwatch.watchdog import relaxed_watchdog
from privwatch.watchdog._mechanism import _effective_level, _utility
from privwatch.watchdog._partition import _symbol_risk, partition
from privwatch.watchdog._relaxed import _breach, _singleton_breach


def _reference(
    arr: NDArray[np.float64], eps: float, dlt: float, eps_max: float = math.inf
) -> tuple[NDArray[np.bool_], list[int]]:
    """The implementation before issue #18 (commit 3ceac28), O(|X|^2): every trial re-sums."""
    p_s, p_x = arr.sum(axis=1), arr.sum(axis=0)
    keep = partition(arr, eps)
    strict = _utility(p_x, keep)
    single = _singleton_breach(arr, p_s, eps)
    risk = _symbol_risk(arr)
    candidates = np.flatnonzero(~keep & (single <= dlt) & (risk <= eps_max))
    candidates = candidates[np.argsort(single[candidates], kind="stable")]
    current_nmil = strict.nmil
    exempted: list[int] = []
    for x in candidates:
        trial = keep.copy()
        trial[x] = True
        if _breach(arr, trial, eps, single) > dlt + 1e-12:
            continue
        if _effective_level(arr, trial, risk)[1] > eps_max:
            continue
        trial_nmil = _utility(p_x, trial).nmil
        if trial_nmil > current_nmil + 1e-15:
            continue
        keep, current_nmil = trial, trial_nmil
        exempted.append(int(x))
    return keep, exempted


def _random_pmf(rng: np.random.Generator, n_s: int, n_x: int, ties: bool) -> NDArray[np.float64]:
    if ties:  # small integer counts: many equal singleton breaches and equal columns
        counts = rng.integers(0, 4, size=(n_s, n_x)).astype(float)
        counts[0, 0] += 1.0
    else:
        counts = rng.gamma(0.5, size=(n_s, n_x))
    return np.asarray(counts / counts.sum(), dtype=np.float64)


@pytest.mark.parametrize("ties", [False, True])
def test_identical_to_quadratic_reference_on_random_cases(ties: bool) -> None:
    rng = np.random.default_rng(18 + ties)
    n_exempted = 0
    for _ in range(120):
        n_s, n_x = int(rng.integers(2, 5)), int(rng.integers(1, 60))
        arr = _random_pmf(rng, n_s, n_x, ties)
        eps = float(rng.choice([0.0, 0.1, 0.3, 0.7, 1.5, math.inf]))
        dlt = float(rng.choice([0.0, 0.05, 0.2, 0.5, 1.0]))
        eps_max = float(rng.choice([0.5, 2.0, math.inf]))
        keep, exempted = _reference(arr, eps, dlt, eps_max)
        got = relaxed_watchdog(arr, eps, dlt, eps_max)
        np.testing.assert_array_equal(got.keep, keep)
        assert got.exempted == exempted
        n_exempted += len(exempted)
    assert n_exempted > 50  # the cases exercise the scan, not only the strict partition


@pytest.mark.slow
def test_identical_at_6000_symbols() -> None:
    rng = np.random.default_rng(16000)
    arr = _random_pmf(rng, 3, 6_000, ties=False)
    keep, exempted = _reference(arr, 0.4, 0.1)
    got = relaxed_watchdog(arr, 0.4, 0.1)
    np.testing.assert_array_equal(got.keep, keep)
    assert got.exempted == exempted
    assert len(exempted) > 100


@pytest.mark.slow
def test_one_million_symbols_runs() -> None:
    # The 30 s target is a benchmark (benchmarks/bench_relaxed.py, BENCHMARKS.md), not a timed test.
    rng = np.random.default_rng(10**6)
    arr = _random_pmf(rng, 4, 1_000_000, ties=False)
    got = relaxed_watchdog(arr, 0.4, 0.1)
    assert got.satisfied
    assert len(got.exempted) > 1000
