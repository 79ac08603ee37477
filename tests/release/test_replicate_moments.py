"""The replicates' posterior moments kept per model, value, family and priors
(``_evaluation._replicate_moments``, issue #42 item 3): the ones :func:`posteriors` gives the
rows under any box (to the BLAS products' last bits), the same bits each time a row is asked,
and computed as asked beyond their memory budget."""

from __future__ import annotations

import numpy as np
import pytest

from privwatch.release.heldout import _evaluation
from privwatch.release.heldout._posterior import GridRows, posteriors
from privwatch.release.heldout._prior import PRIOR_CANDIDATES, fit_candidate


class _Fitted:
    def __init__(self, eta: np.ndarray) -> None:
        self.eta = eta


class _Value:
    def __init__(self, column: int, eta: np.ndarray) -> None:
        self.column, self.full = column, {0: _Fitted(eta)}


class _Model:  # what _replicate_moments reads of a HeldOutModel
    def __init__(self, x: np.ndarray, n: np.ndarray) -> None:
        self.x, self.n, self.grid_rows = x, n, GridRows()


def _setup(seed: int) -> tuple[_Model, _Value, np.ndarray]:
    rng = np.random.default_rng(seed)
    size = 1_500
    n = np.concatenate([rng.integers(1, 40, size - 100), rng.integers(500, 3000, 100)])
    n = n.astype(np.float64)
    k = np.floor(rng.random(size) * (n + 1))
    codes = np.zeros((400, 1), dtype=np.int64)
    fitted = fit_candidate(PRIOR_CANDIDATES[0], k[:400], n[:400], codes, 0.2, rng)
    alphas = np.stack([fitted.alpha + rng.normal(0, 0.05, fitted.alpha.shape) for _ in range(3)])
    x = np.stack([n - k, k], axis=1)
    return _Model(x, n), _Value(1, rng.normal(-1.5, 1.0, size)), alphas


def test_kept_moments_are_the_posteriors_of_the_rows() -> None:
    """Each row's moments are the ones :func:`posteriors` gives it (to the last bits: the BLAS
    products round a row by its place in the block, so a row computed among other rows can
    differ in its last bit), whatever box the caller checks, and a row asked again gets the
    bits it got first, in any order of asking."""
    model, vm, alphas = _setup(5)
    rng = np.random.default_rng(6)
    boxes = [[(0.05, 0.4)] * 3, [(0.0, 0.3), (0.1, 1.0), (0.2, 0.6)]]
    first: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for trial in range(6):  # overlapping subsets, in other orders, beside other boxes
        rows = rng.choice(len(model.n), 600, replace=False)
        if trial % 2:
            rows = np.sort(rows)
        k, n, eta = model.x[rows, 1], model.n[rows], vm.full[0].eta[rows]
        want = posteriors(alphas, k, n, eta, boxes[trial % 2])
        got = _evaluation._replicate_moments(model, vm, 0, alphas, rows)  # type: ignore[arg-type]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13, atol=0)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-15)
        for i, r in enumerate(rows.tolist()):
            seen = first.setdefault(r, (got[0][i], got[1][i]))
            assert seen[0].tobytes() == got[0][i].tobytes()
            assert seen[1].tobytes() == got[1][i].tobytes()
    ((mean, _var, known),) = _evaluation._MOMENTS[model].values()  # type: ignore[index]
    assert known.sum() == len(first) < 6 * 600  # later calls read kept rows
    # a kept row altered would show: the comparisons above can fail
    mean[known] *= 1.001
    again = _evaluation._replicate_moments(model, vm, 0, alphas, rows)  # type: ignore[arg-type]
    assert not np.allclose(again[0], want[0], rtol=1e-13, atol=0)


def test_beyond_the_budget_moments_are_computed_as_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no room, nothing is kept and each call is :func:`posteriors` of its rows, bit for
    bit."""
    monkeypatch.setattr(_evaluation, "MOMENTS_BYTES", 0)
    model, vm, alphas = _setup(7)
    rows = np.random.default_rng(8).choice(len(model.n), 500, replace=False)
    k, n, eta = model.x[rows, 1], model.n[rows], vm.full[0].eta[rows]
    want = posteriors(alphas, k, n, eta, [(0.0, 1.0)] * 3)
    got = _evaluation._replicate_moments(model, vm, 0, alphas, rows)  # type: ignore[arg-type]
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    assert not _evaluation._MOMENTS.get(model)  # type: ignore[call-overload]


def test_the_budget_holds_for_all_models_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model short of room drops the other models' kept moments, so the budget bounds them
    all (a long-running process checks many tables)."""
    first, vm1, alphas1 = _setup(9)
    second, vm2, alphas2 = _setup(10)
    one = 2 * 8 * len(first.n) * len(alphas1) + len(first.n)
    monkeypatch.setattr(_evaluation, "MOMENTS_BYTES", one + one // 2)
    rows = np.arange(200)
    _evaluation._replicate_moments(first, vm1, 0, alphas1, rows)  # type: ignore[arg-type]
    assert _evaluation._moments_bytes() == one
    _evaluation._replicate_moments(second, vm2, 0, alphas2, rows)  # type: ignore[arg-type]
    assert first not in _evaluation._MOMENTS and second in _evaluation._MOMENTS
    assert _evaluation._moments_bytes() == one
