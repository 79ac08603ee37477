"""The held-out model's kept likelihood rows (:class:`GridRows`) give the posteriors bit for bit,
in any order of asking, under any prior and box, and within their memory budget."""

from __future__ import annotations

import numpy as np
import pytest

from privwatch.release.heldout._posterior import GRID, GridRows, posteriors
from privwatch.release.heldout._prior import GRID as PRIOR_GRID


def _rows(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = rng.integers(1, 40, size).astype(np.float64)
    k = np.floor(rng.random(size) * (n + 1))
    eta = rng.normal(-1.5, 1.0, size)
    return k, n, eta


def _alphas(rng: np.random.Generator, priors: int) -> np.ndarray:
    from privwatch.release.heldout._prior import PRIOR_CANDIDATES, fit_candidate

    k, n, _ = _rows(rng, 400)
    codes = np.zeros((400, 1), dtype=np.int64)
    fitted = fit_candidate(PRIOR_CANDIDATES[0], k, n, codes, 0.2, rng)
    return np.stack([fitted.alpha + rng.normal(0, 0.05, fitted.alpha.shape) for _ in range(priors)])


@pytest.mark.parametrize("budget", [64 * 2**20, 300 * 2 * GRID.size * 8, 0])
def test_kept_rows_give_the_same_bits(budget: int) -> None:
    rng = np.random.default_rng(3)
    assert GRID is PRIOR_GRID
    k, n, eta = _rows(rng, 2_000)
    alphas = _alphas(rng, 3)
    kept = GridRows(budget)
    bounds = [(0.05, 0.4), (0.0, 0.3), (0.1, 1.0)]
    for trial in range(6):  # overlapping subsets, in other orders, under other boxes
        pick = rng.choice(len(k), 700, replace=False)
        if trial % 2:
            pick = np.sort(pick)
        args = (alphas, k[pick], n[pick], eta[pick], bounds)
        plain = posteriors(*args)
        again = posteriors(*args, kept)
        for a, b in zip(plain, again, strict=True):
            np.testing.assert_array_equal(a, b)
    assert len(kept) <= budget // (2 * GRID.size * 8)
    if budget:
        assert len(kept) > 0  # rows were kept, so later calls read them


def test_a_wrong_kept_row_would_show() -> None:
    """The comparison above can fail: a kept row altered gives other posteriors."""
    rng = np.random.default_rng(4)
    k, n, eta = _rows(rng, 300)
    alphas = _alphas(rng, 2)
    kept = GridRows()
    first = posteriors(alphas, k, n, eta, [(0.05, 0.4)] * 2, kept)
    kept._lik[: len(kept)] *= 1.5 ** rng.random((len(kept), GRID.size))  # corrupt them
    second = posteriors(alphas, k, n, eta, [(0.05, 0.4)] * 2, kept)
    assert not np.array_equal(first[0], second[0])
