"""The held-out tuple model's cheaper fits (issue #42 item 2) give the same floats as the plain
computations they replace: the main effects' X' W X, the grid log-likelihood computed once per
distinct eta, BFGS without scipy's wrappers, and the values of one table fitted in threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.sparse import csr_matrix, diags
from scipy.special import log_expit
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from privwatch.release.cells import CountTable
from privwatch.release.heldout import _model
from privwatch.release.heldout._bfgs import minimize_bfgs
from privwatch.release.heldout._prior import (
    GRID,
    _columns,
    _fit_alpha,
    _Information,
    _likelihood,
    grid_log_likelihood,
)
from tests.release._cases import assert_same_fits, fold_table


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


def test_bfgs_is_scipys_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prior's objective on random likelihood rows, from flat and from warm starts, and a
    badly scaled quadratic: the same iterates as minimize(method="BFGS")."""
    rng = np.random.default_rng(3)
    calls: list[tuple[object, np.ndarray, np.ndarray]] = []

    def spy(fun: object, x0: np.ndarray, gtol: float, maxiter: int) -> np.ndarray:
        x = minimize_bfgs(fun, x0, gtol, maxiter)  # type: ignore[arg-type]
        opts = {"gtol": gtol, "maxiter": maxiter}
        calls.append((fun, x, minimize(fun, x0, jac=True, method="BFGS", options=opts).x))
        return x

    from privwatch.release.heldout import _prior

    monkeypatch.setattr(_prior, "minimize_bfgs", spy)
    for trial in range(8):
        n = rng.integers(1, 30, 400).astype(float)
        k = np.floor(rng.random(400) * (n + 1) * rng.random())
        lik = _likelihood(k, n, np.round(rng.normal(-1, 1, 400) / 0.05) * 0.05)
        start = None if trial % 2 else rng.normal(0, 0.3, 14)
        _fit_alpha(lik, rng.gamma(1.0, size=400), 14, 1.0 if trial < 4 else 0.01, start)
    scale = np.array([1.0, 30.0, 0.01, 5.0])

    def quadratic(x: np.ndarray) -> tuple[float, np.ndarray]:
        return float(((x - 1) ** 2 * scale).sum()), 2 * (x - 1) * scale

    x0 = np.zeros(4)
    theirs = minimize(quadratic, x0, jac=True, method="BFGS", options={"gtol": 1e-8}).x
    calls.append((quadratic, minimize_bfgs(quadratic, x0, 1e-8, 300), theirs))
    assert len(calls) == 9
    for _, ours, theirs in calls:
        np.testing.assert_array_equal(ours, theirs)


def _fit_all(
    table: CountTable, wanted: list[tuple[int, float]]
) -> list[tuple[_model.ValueModel, list[tuple[int, np.ndarray]]]]:
    model = _model.HeldOutModel(table, np.eye(3))
    return [(vm, model.draws(vm, 20)) for vm in model.values(wanted)]


@pytest.mark.parametrize("blas", [1, None])
def test_values_and_draws_fitted_in_threads_are_those_of_one_thread(
    blas: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools: list[int] = []

    class Spy(ThreadPoolExecutor):
        def __init__(self, workers: int) -> None:
            pools.append(workers)
            super().__init__(workers)

    monkeypatch.setattr(_model, "ThreadPoolExecutor", Spy)
    table = fold_table(np.random.default_rng(2))
    wanted = [(c, float(p)) for c, p in enumerate(table.total().sum(0) / table.total().sum())]
    with threadpool_limits(limits=blas, user_api="blas"):
        monkeypatch.setattr(_model, "FIT_THREADS", 1)
        alone = _fit_all(table, wanted)
        assert not pools
        monkeypatch.setattr(_model, "FIT_THREADS", 2)
        together = _fit_all(table, wanted)
        assert bool(pools) == _model._one_blas_thread()  # threads only on one BLAS thread
    if blas == 1:
        assert len(pools) == 4 and set(pools) == {2}  # the values, then each value's refits
    assert_same_fits(alone, together)
