"""Continuous PPANs stacked (fit_many): each member equals its own fit, the stack touches no
global random state, and models that cannot share a stack are fitted one by one."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from privwatch.adversarial import (
    PPAN,
    CategoricalAdversary,
    GaussianAdversary,
    GaussianMechanism,
    GaussianMixtureMechanism,
    SeedNoiseMechanism,
    fit_many,
    pixel_cross_entropy,
    squared_error,
)
from privwatch.adversarial._ppan_stacked import can_stack_continuous

MECHANISMS: dict[str, Callable[[], Any]] = {
    "seed_noise": lambda: SeedNoiseMechanism(1, 1, hidden=(5,)),
    "gaussian": lambda: GaussianMechanism(1, 1, hidden=(5,)),
    "mixture": lambda: GaussianMixtureMechanism(1, 1, hidden=(5,)),
}


def _gaussian_data(seed: int, n: int = 300) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    x = g.standard_normal((n, 1))
    y = x + 0.5 * g.standard_normal((n, 1))
    return y, x, y


def _ppan(kind: str, delta: float, seed: int, **params: Any) -> PPAN:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        mech, adv = MECHANISMS[kind](), GaussianAdversary(1, 1, hidden=(5,))
    settings: dict[str, Any] = {"epochs": 3, "batch_size": 64, "rng": seed, **params}
    return PPAN(mech, adv, squared_error, budget=delta, **settings)


def _assert_same_fit(a: PPAN, b: PPAN, atol: float = 1e-6) -> None:
    assert len(a.history_) == len(b.history_)
    for ra, rb in zip(a.history_, b.history_, strict=True):
        assert ra["log_likelihood"] == pytest.approx(rb["log_likelihood"], abs=1e-5)
        assert ra["distortion"] == pytest.approx(rb["distortion"], abs=1e-5)
    for name in ("mechanism_", "adversary_", "discriminator_"):
        sa = {} if getattr(a, name) is None else getattr(a, name).state_dict()
        sb = {} if getattr(b, name) is None else getattr(b, name).state_dict()
        assert sa.keys() == sb.keys()
        for key in sa:
            torch.testing.assert_close(sa[key], sb[key], atol=atol, rtol=0)


@pytest.mark.parametrize("kind", list(MECHANISMS))
def test_each_stacked_member_equals_its_own_fit(kind: str) -> None:
    def models() -> list[PPAN]:  # budgets, penalty weights and seeds differ
        return [_ppan(kind, 0.2, 0), _ppan(kind, 0.5, 1, lam=100.0), _ppan(kind, 0.8, 2)]

    data = [_gaussian_data(s) for s in range(3)]  # a fresh draw per point
    assert can_stack_continuous(models(), data)
    one_by_one = fit_many(models(), data, stack=False)
    stacked = fit_many(models(), data)
    for a, b, (w, _, _) in zip(one_by_one, stacked, data, strict=True):
        _assert_same_fit(a, b)
        np.testing.assert_allclose(a.release(w[:30], rng=4), b.release(w[:30], rng=4), atol=1e-5)
        assert not b.cuda_graph_


def _digit_like(lam: float, seed: int) -> PPAN:
    """The digits experiment's shape: tanh mechanism with a sigmoid output, categorical
    adversary, realism discriminator, Lagrangian penalty over lambda."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        mech = SeedNoiseMechanism(6, 6, hidden=(8,), noise_dim=3)
        mech.net = torch.nn.Sequential(
            *[torch.nn.Tanh() if isinstance(m, torch.nn.ReLU) else m for m in mech.net],
            torch.nn.Sigmoid(),
        )
        adv = CategoricalAdversary(6, 4, hidden=(8,))
        disc = torch.nn.Sequential(
            torch.nn.Linear(6, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1), torch.nn.Sigmoid()
        )
    return PPAN(
        mech,
        adv,
        pixel_cross_entropy,
        lam=lam,
        penalty="lagrangian",
        discriminator=disc,
        gamma=2.0,
        adversary_steps=2,
        schedule="cosine",
        epochs=3,
        batch_size=64,
        rng=seed,
    )


def test_discriminator_categorical_adversary_and_schedule_stack_too() -> None:
    g = np.random.default_rng(0)
    y = (g.random((200, 6)) > 0.5).astype(np.float64)
    x = (y[:, 0] + 2 * y[:, 1]).astype(int)

    def models() -> list[PPAN]:
        return [_digit_like(lam, s) for s, lam in enumerate([0.5, 2.0, 8.0])]

    assert can_stack_continuous(models(), [(y, x, y)] * 3)
    one_by_one, stacked = fit_many(models(), (y, x, y), stack=False), fit_many(models(), (y, x, y))
    for a, b in zip(one_by_one, stacked, strict=True):
        _assert_same_fit(a, b)


def test_what_cannot_share_a_stack() -> None:
    data = [_gaussian_data(0)] * 2
    base = [_ppan("seed_noise", 0.2, 0), _ppan("seed_noise", 0.4, 1)]
    assert can_stack_continuous(base, data)
    other_act = _ppan("seed_noise", 0.4, 1)
    other_act.mechanism = SeedNoiseMechanism(1, 1, hidden=(5,), activation="tanh")
    other_width = _ppan("seed_noise", 0.4, 1)
    other_width.adversary = GaussianAdversary(1, 1, hidden=(6,))
    cases = {
        "another activation": [base[0], other_act],
        "another width": [base[0], other_width],
        "another family": [base[0], _ppan("gaussian", 0.4, 1)],
        "other settings": [base[0], _ppan("seed_noise", 0.4, 1, epochs=4)],
        "a callback": [base[0], _ppan("seed_noise", 0.4, 1, callbacks=[print])],
        "default networks": [PPAN(epochs=2), PPAN(epochs=2)],
        "one model": base[:1],
    }
    for why, models in cases.items():
        assert not can_stack_continuous(models, data[: len(models)]), why
    assert not can_stack_continuous(base, [_gaussian_data(0), _gaussian_data(0, n=200)])
    other = _ppan("seed_noise", 0.4, 1)
    other.distortion = lambda u, r: ((u - r) ** 2).sum(dim=1)  # the same loss, another function
    assert not can_stack_continuous([base[0], other], data)


def test_mixed_kinds_are_stacked_kind_by_kind_and_keep_their_order() -> None:
    from privwatch.datasets import symmetric_pair

    d = symmetric_pair(200, m=3, p=0.3, observation="useful", rng=0)
    finite = [
        PPAN.finite(1 - np.eye(3), n_observed=3, n_sensitive=3, budget=b, epochs=3, rng=i)
        for i, b in enumerate([0.1, 0.4])
    ]
    cont = [_ppan("gaussian", 0.2, 0), _ppan("gaussian", 0.5, 1)]
    w, x, _ = _gaussian_data(0, n=200)
    models = [finite[0], cont[0], finite[1], cont[1]]
    data = [(d.observed, d.sensitive, d.useful), (w, x, w)] * 2
    fitted = fit_many(models, data)
    assert fitted == models and all(m.fitted_ for m in fitted)
    alone = _ppan("gaussian", 0.5, 1).fit(w, x, w)
    _assert_same_fit(alone, fitted[3])


def test_stacked_fit_leaves_global_rng_untouched_and_is_reproducible() -> None:
    torch.manual_seed(123)
    np.random.seed(7)  # noqa: NPY002 - the global state under test
    before = (torch.get_rng_state(), np.random.get_state()[1].copy())  # noqa: NPY002
    data = [_gaussian_data(s) for s in range(2)]

    def run(seed: int) -> np.ndarray:
        models = [_ppan("seed_noise", 0.3, seed), _ppan("seed_noise", 0.6, seed + 1)]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no graph fallback warning on the CPU
            fitted = fit_many(models, data)
        return np.stack([m.release(data[0][0][:10], rng=0) for m in fitted])

    first, again, other = run(5), run(5), run(6)
    assert torch.equal(before[0], torch.get_rng_state())
    assert np.array_equal(before[1], np.random.get_state()[1])  # noqa: NPY002
    assert np.array_equal(first, again) and not np.array_equal(first, other)
