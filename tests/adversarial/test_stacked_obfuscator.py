"""Obfuscators stacked (fit_many): each member equals its own fit (its history, its early stop,
its kept generator), for both generator families and both attackers; no global random state;
saved members load as any obfuscator."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from privwatch.adversarial import Obfuscator, fit_many
from privwatch.adversarial._obfuscator_stack_fit import can_stack_obfuscators


def _points(seed: int = 0, n: int = 120) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    users = np.repeat(np.arange(3), n // 3)
    centres = np.array([[0.0, 0.0], [400.0, 0.0], [0.0, 400.0]])
    return centres[users] + 150 * g.standard_normal((n, 2)), users


def _models(budgets: list[float], **params: Any) -> list[Obfuscator]:
    settings: dict[str, Any] = {
        "max_iter": 6,
        "patience": 2,
        "hits": 2,
        "classifier_epochs": 2,
        "generator_epochs": 2,
        "classifier_batch_size": 64,
        "generator_batch_size": 32,
        **params,
    }
    return [Obfuscator(b, rng=s, **settings) for s, b in enumerate(budgets)]


def _assert_same_fit(a: Obfuscator, b: Obfuscator, pts: np.ndarray) -> None:
    assert len(a.history_) == len(b.history_)
    assert (a.best_epoch_, a.n_iter_) == (b.best_epoch_, b.n_iter_)
    assert a.val_accuracy_ == pytest.approx(b.val_accuracy_, abs=1e-6)
    assert a.budget_ == b.budget_
    for ra, rb in zip(a.history_, b.history_, strict=True):
        assert ra.keys() == rb.keys()
        for key in ra:
            assert ra[key] == pytest.approx(rb[key], abs=1e-5), key
    np.testing.assert_allclose(a.release(pts, rng=0), b.release(pts, rng=0), atol=1e-3)


CASES: dict[str, dict[str, Any]] = {
    "laplace": {},
    "cross_entropy": {"loss": "cross_entropy"},
    "anchors": {"generator": "anchors", "anchor_grid": 3},
    "bayes": {"generator": "anchors", "anchor_grid": 3, "attacker": "bayes"},
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_stacked_member_equals_its_own_fit(case: str) -> None:
    pts, _ = _points()
    data = [_points(s) for s in range(3)]  # budgets x seeds x data sets of one size
    params = CASES[case]
    assert can_stack_obfuscators(_models([200.0, 300.0, 400.0], **params), data)
    one_by_one = fit_many(_models([200.0, 300.0, 400.0], **params), data, stack=False)
    stacked = fit_many(_models([200.0, 300.0, 400.0], **params), data)
    for a, b in zip(one_by_one, stacked, strict=True):
        _assert_same_fit(a, b, pts[:30])
        assert b.cuda_graph_ is False


@pytest.mark.slow  # about 15 s on the shared 2-core machine
def test_members_stop_at_their_own_iteration_and_keep_their_own_best() -> None:
    pts, users = _points()
    models = _models([150.0, 300.0, 450.0, 600.0], max_iter=8)
    alone = [m.fit(pts, users) for m in _models([150.0, 300.0, 450.0, 600.0], max_iter=8)]
    stacked = fit_many(models, (pts, users))
    lengths = {len(m.history_) for m in alone}
    assert len(lengths) > 1, "the case should have members stopping at different iterations"
    for a, b in zip(alone, stacked, strict=True):
        _assert_same_fit(a, b, pts[:30])


def test_generator_families_in_one_call_are_stacked_family_by_family() -> None:
    pts, users = _points()
    laplace = _models([200.0, 300.0], max_iter=3)
    anchors = _models([200.0, 300.0], max_iter=3, generator="anchors", anchor_grid=3)
    models = [laplace[0], anchors[0], laplace[1], anchors[1]]
    fitted = fit_many(models, (pts, users))
    assert fitted == models
    alone = _models([200.0, 300.0], max_iter=3, generator="anchors", anchor_grid=3)[1]
    alone.fit(pts, users)
    _assert_same_fit(alone, fitted[3], pts[:30])


def test_what_cannot_share_a_stack() -> None:
    pts, users = _points()
    data = [(pts, users)] * 2
    assert can_stack_obfuscators(_models([200.0, 300.0]), data)
    cases = {
        "other hits": [_models([200.0])[0], _models([300.0], hits=3)[0]],
        "a callback": [_models([200.0])[0], _models([300.0], callbacks=[print])[0]],
        "progress": [_models([200.0])[0], _models([300.0], progress=True)[0]],
        "another attacker": [
            _models([200.0], generator="anchors")[0],
            _models([300.0], generator="anchors", attacker="bayes")[0],
        ],
    }
    for why, models in cases.items():
        assert not can_stack_obfuscators(models, data), why
    fewer = (pts[:-1], users[:-1])  # one user has a point less: another split
    assert not can_stack_obfuscators(_models([200.0, 300.0]), [(pts, users), fewer])


def test_stacked_fit_leaves_global_rng_untouched_saves_and_reloads(tmp_path: Path) -> None:
    pts, users = _points()
    torch.manual_seed(123)
    np.random.seed(7)  # noqa: NPY002 - the global state under test
    before = (torch.get_rng_state(), np.random.get_state()[1].copy())  # noqa: NPY002
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph fallback warning on the CPU
        fitted = fit_many(_models([200.0, 300.0], max_iter=3), (pts, users))
        again = fit_many(_models([200.0, 300.0], max_iter=3), (pts, users))
    assert torch.equal(before[0], torch.get_rng_state())
    assert np.array_equal(before[1], np.random.get_state()[1])  # noqa: NPY002
    for a, b in zip(fitted, again, strict=True):
        assert np.array_equal(a.release(pts[:20], rng=0), b.release(pts[:20], rng=0))
    fitted[1].save(tmp_path / "member.pwm")
    loaded = Obfuscator.load(tmp_path / "member.pwm")
    np.testing.assert_allclose(loaded.release(pts[:20], rng=1), fitted[1].release(pts[:20], rng=1))
    assert loaded.history_ == fitted[1].history_
