"""No global random state (issue #14 item 6): fitting any torch model of privwatch leaves torch's
and NumPy's global generators exactly as they were, and the same ``rng`` gives the same model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from privwatch.adversarial import (
    PPAN,
    GaussianAdversary,
    Obfuscator,
    SeedNoiseMechanism,
    fit_many,
    squared_error,
)
from privwatch.datasets import symmetric_pair
from privwatch.estimators import ClassifierLift, DVLift


def _global_states() -> tuple[Any, ...]:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []
    return torch.get_rng_state(), np.random.get_state(), cuda  # noqa: NPY002 - under test


def _assert_unchanged(before: tuple[Any, ...]) -> None:
    t_after, np_after, cuda_after = _global_states()
    assert torch.equal(before[0], t_after), "torch's global generator moved"
    assert before[1][0] == np_after[0] and np.array_equal(before[1][1], np_after[1])
    assert before[1][2:] == np_after[2:], "NumPy's global generator moved"
    assert all(torch.equal(a, b) for a, b in zip(before[2], cuda_after, strict=True))


def _finite_ppan(delta: float, rng: int) -> PPAN:
    return PPAN.finite(
        1 - np.eye(3), n_observed=3, n_sensitive=3, budget=delta, epochs=4, lr=0.05, rng=rng
    )


def _fit_ppan(seed: int) -> np.ndarray:
    d = symmetric_pair(200, m=3, p=0.3, observation="useful", rng=0)
    return _finite_ppan(0.2, seed).fit(d.observed, d.sensitive, d.useful).channel()


def _fit_stacked(seed: int) -> np.ndarray:
    d = symmetric_pair(200, m=3, p=0.3, observation="useful", rng=0)
    models = [_finite_ppan(0.1, seed), _finite_ppan(0.4, seed + 1)]
    models = fit_many(models, (d.observed, d.sensitive))
    return np.stack([m.channel() for m in models])


def _fit_continuous_ppan(seed: int) -> np.ndarray:
    g = np.random.default_rng(0)
    s = g.standard_normal((100, 1))
    observed = s + g.standard_normal((100, 1))
    with torch.random.fork_rng(devices=[]):  # the user's own modules: their weights are theirs
        torch.manual_seed(1)
        mech, adv = SeedNoiseMechanism(1, 1, hidden=(4,)), GaussianAdversary(1, 1, hidden=(4,))
    before = _global_states()
    ppan = PPAN(mech, adv, squared_error, budget=0.3, epochs=2, batch_size=50, rng=seed)
    out = ppan.fit(observed, s).release(observed[:10], rng=0)
    _assert_unchanged(before)
    return out


def _points() -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(0)
    users = np.repeat(np.arange(3), 40)
    centres = np.array([[0.0, 0.0], [400.0, 0.0], [0.0, 400.0]])
    return centres[users] + 150 * g.standard_normal((120, 2)), users


def _fit_obfuscator(seed: int, **params: Any) -> np.ndarray:
    pts, users = _points()
    ob = Obfuscator(
        300.0, max_iter=2, hits=2, classifier_epochs=1, generator_epochs=1, rng=seed, **params
    )
    ob.fit(pts, users)  # G0 does not depend on the seed: compare the rounds' measurements too
    measured = [r[k] for r in ob.history_ for k in ("train_accuracy", "val_mutual_information")]
    return np.concatenate([ob.release(pts[:20], rng=0).ravel(), measured])


def _fit_lift(cls: type, seed: int, **params: Any) -> np.ndarray:
    g = np.random.default_rng(0)
    x = g.standard_normal((300, 2))
    s = (x[:, 0] + g.standard_normal(300) > 0).astype(int)
    est = cls(rng=seed, epochs=3, n_ensemble=2, batch_size=64, **params).fit(x, s)
    return np.asarray(est.log_lift(x[:20]))


FITS: dict[str, Callable[[int], np.ndarray]] = {
    "ppan-finite": _fit_ppan,
    "ppan-stacked": _fit_stacked,
    "ppan-continuous": _fit_continuous_ppan,
    "obfuscator": _fit_obfuscator,
    "obfuscator-bayes": lambda seed: _fit_obfuscator(
        seed, generator="anchors", attacker="bayes", anchor_grid=3
    ),
    "classifier-lift": lambda seed: _fit_lift(ClassifierLift, seed, dropout=0.1),
    "dv-lift": lambda seed: _fit_lift(DVLift, seed, dropout=0.1),
    "nwj-lift": lambda seed: _fit_lift(DVLift, seed, objective="nwj"),
}


@pytest.mark.parametrize("name", list(FITS))
def test_fitting_leaves_global_rng_untouched_and_same_seed_same_result(name: str) -> None:
    torch.manual_seed(123)
    np.random.seed(7)  # noqa: NPY002 - the global state under test
    before = _global_states()
    first = FITS[name](5)
    _assert_unchanged(before)
    again = FITS[name](5)
    other = FITS[name](6)
    _assert_unchanged(before)
    assert np.array_equal(first, again), "same rng, different result"
    assert not np.array_equal(first, other), "the rng has no effect"
