"""The held-out tuple model's cheaper fits (issue #42 item 2) give the same floats as the plain
computations they replace: the main effects' X' W X and the grid log-likelihood computed once
per distinct eta."""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix, diags
from scipy.special import log_expit

from privwatch.release.heldout._prior import GRID, _columns, _Information, grid_log_likelihood


def _design(rng: np.random.Generator) -> tuple[np.ndarray, int]:
    c, m = int(rng.integers(0, 7)), int(rng.integers(1, 2_000))
    sizes = rng.integers(1, 12, size=c)
    codes = (rng.random((m, c)) * sizes).astype(np.int64)
    cols = _columns(codes, sizes) if c else np.zeros((m, 0), dtype=np.int64)
    return np.concatenate([np.zeros((m, 1), dtype=np.int64), cols], axis=1), int(sizes.sum()) + 1


def test_information_is_the_sparse_product_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    for _ in range(60):
        idx, q = _design(rng)
        m = len(idx)
        x = csr_matrix((np.ones(idx.size), (np.repeat(np.arange(m), idx.shape[1]), idx.ravel())))
        x.resize((m, q))
        w = rng.gamma(0.3, size=m) * (rng.random(m) > 0.3)  # zero weights: unseen rows
        np.testing.assert_array_equal(_Information(idx, q)(w), (x.T @ diags(w) @ x).toarray())


def test_grid_log_likelihood_is_the_per_row_formula_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    n = rng.integers(1, 60, 3_000).astype(float)
    k = np.floor(rng.random(3_000) * (n + 1))
    eta = np.round(rng.normal(-1.0, 2.0, 3_000) / 0.05) * 0.05  # few distinct, as the fits ask
    eta[:10] = rng.normal(size=10)  # and some of their own
    z = eta[:, None] + GRID[None, :]
    plain = k[:, None] * log_expit(z) + (n - k)[:, None] * log_expit(-z)
    np.testing.assert_array_equal(grid_log_likelihood(k, n, eta), plain)
