"""fit_many: one PPAN per budget, sequentially or in worker processes, same result."""

from __future__ import annotations

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch.adversarial import PPAN, fit_many
from privwatch.datasets import symmetric_pair


def _models(deltas: list[float]) -> list[PPAN]:
    return [
        PPAN.finite(
            1 - np.eye(3),
            n_observed=3,
            n_sensitive=3,
            delta=d,
            epochs=15,
            lr=0.05,
            adversary_lr=0.1,
            rng=i,
        )
        for i, d in enumerate(deltas)
    ]


def test_parallel_fits_equal_sequential_fits_and_follow_their_budgets() -> None:
    deltas = [0.05, 0.3, 0.6]
    sets = [symmetric_pair(600, m=3, p=0.3, observation="useful", rng=s) for s in range(3)]
    data = [(d.w, d.x, d.y) for d in sets]
    seq = fit_many(_models(deltas), data, n_jobs=1)
    par = fit_many(_models(deltas), data, n_jobs=2)
    for a, b in zip(seq, par, strict=True):
        np.testing.assert_allclose(a.channel(), b.channel(), atol=1e-6)
    # each model kept its own budget: more distortion allowed, less leakage
    mis = [s.evaluate(m.channel())[0] for s, m in zip(sets, seq, strict=True)]
    assert mis[0] > mis[1] > mis[2]


def test_one_shared_data_set() -> None:
    d = symmetric_pair(400, m=3, p=0.3, observation="useful", rng=0)
    fitted = fit_many(_models([0.1, 0.5]), (d.w, d.x, d.y))
    assert all(hasattr(m, "fitted_") for m in fitted)
    assert d.evaluate(fitted[0].channel())[1] < d.evaluate(fitted[1].channel())[1]


def test_bad_input() -> None:
    d = symmetric_pair(100, m=3, p=0.3, observation="useful", rng=0)
    with pytest.raises(ValidationError, match="at least one"):
        fit_many([], (d.w, d.x, d.y))
    with pytest.raises(ValidationError, match="one per model"):
        fit_many(_models([0.1, 0.2]), [(d.w, d.x, d.y)] * 3)
    with pytest.raises(ValidationError, match="n_jobs"):
        fit_many(_models([0.1]), (d.w, d.x, d.y), n_jobs=0)
