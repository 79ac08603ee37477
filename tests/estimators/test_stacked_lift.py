"""Issue 34: the neural lift estimators train as one stacked program, and each stacked member
is the network its own fit gives (one network after another, same seed) up to float rounding.

Every comparison is against :func:`privwatch.estimators._stacking.one_after_another`, the
pre-stacking path (one ``torch.optim`` optimiser and one :class:`~privwatch._trainer.Trainer`
per network). Tolerances are float32 rounding carried through a few epochs of Adam (1e-5);
the runs are short because Adam amplifies rounding differences in the coordinates whose
gradients are near zero, so long float32 runs drift apart by more while the arithmetic is the
same (in float64 the two paths agree to 1e-15 after 40 epochs: checked by hand, not here).
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch

from privwatch._cuda_graph import GraphFallbackWarning
from privwatch.estimators import ClassifierLift, DVLift, cross_fit_source
from privwatch.estimators._stacked_lift import _graph_reason
from privwatch.estimators._stacked_net import StackedOptimizer
from privwatch.estimators._stacking import LiftStack, fit_together, one_after_another

TOL = 1e-5


def _data(n: int = 500, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    g = np.random.default_rng(seed)
    x = g.standard_normal((n, 2))
    c = g.choice(["a", "b", "c"], n)
    s = (x[:, 0] + g.standard_normal(n) > 0).astype(int) + (c == "a")
    return pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "c": c}), s


def _same_members(a: Any, b: Any, tol: float = TOL) -> None:
    """``a`` (stacked) and ``b`` (one after another) hold the same members."""
    assert a.best_epochs_ == b.best_epochs_
    assert a.validation_sizes_ == b.validation_sizes_
    assert [len(h) for h in a.histories_] == [len(h) for h in b.histories_]
    for ha, hb in zip(a.histories_, b.histories_, strict=True):
        for key in ("train_loss", "val_loss"):
            assert np.allclose(ha.column(key), hb.column(key), rtol=0, atol=tol), key
    for ma, mb in zip(a.models_, b.models_, strict=True):
        assert not ma.training
        for pa, pb in zip(ma.parameters(), mb.parameters(), strict=True):
            assert pa.shape == pb.shape
            assert float((pa - pb).detach().abs().max()) < tol


MAKERS = {
    "classifier": lambda **kw: ClassifierLift(**kw),
    "classifier-dropout": lambda **kw: ClassifierLift(dropout=0.2, **kw),
    "dv-shuffle": lambda **kw: DVLift(**kw),
    "dv-exact-adagrad": lambda **kw: DVLift(product="exact", optimizer="adagrad", **kw),
    "nwj": lambda **kw: DVLift(objective="nwj", **kw),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_each_ensemble_member_equals_its_own_fit(name: str) -> None:
    X, s = _data()
    settings = {"rng": 3, "epochs": 3, "n_ensemble": 3, "batch_size": 64, "hidden": (16, 16)}
    stacked = MAKERS[name](**settings).fit(X, s)
    with one_after_another():
        alone = MAKERS[name](**settings).fit(X, s)
    _same_members(stacked, alone)
    assert np.allclose(stacked.log_lift(X), alone.log_lift(X), rtol=0, atol=TOL)
    if isinstance(stacked, ClassifierLift):
        assert np.allclose(stacked.temperatures_, alone.temperatures_, rtol=1e-4)
    else:
        assert np.allclose(stacked.normalization_errors_, alone.normalization_errors_, atol=TOL)


def test_fit_score_stacks_full_fit_and_folds_with_members_stopping_apart() -> None:
    """A large step and patience 2: the 2 + 3 x 2 members stop at different epochs (checked),
    each as its own fit does; the cross-fitted scores and intervals are the same."""
    g = np.random.default_rng(1)
    x = g.standard_normal((400, 2))
    s = (x[:, 0] + 2 * g.standard_normal(400) > 0).astype(int)
    settings = {"rng": 4, "epochs": 12, "n_ensemble": 2, "batch_size": 32, "patience": 2}
    settings |= {"lr": 0.1, "hidden": (16,)}
    stacked = ClassifierLift(**settings)
    scores = stacked.fit_score(x, s, cv=3, n_repeats=1)
    with one_after_another():
        alone = ClassifierLift(**settings)
        expected = alone.fit_score(x, s, cv=3, n_repeats=1)
    _same_members(stacked, alone)
    for a, b in zip(stacked.resamples_, alone.resamples_, strict=True):
        _same_members(a, b)
    lengths = {len(h) for m in stacked.resamples_ for h in m.histories_}
    assert len(lengths) > 1, "the members should stop at different epochs"
    assert np.array_equal(scores.fold, expected.fold)
    assert np.allclose(scores.log_lift, expected.log_lift, rtol=0, atol=TOL)
    assert np.allclose(scores.upper, expected.upper, rtol=0, atol=1e-4)


def test_estimators_of_different_sizes_and_widths_share_one_stack() -> None:
    """Two estimators on 300 and 700 records, one of them without the category 'c' (two
    one-hot columns instead of three: its first layer is padded), and different numbers of
    mini-batches per epoch; each equals its own fit."""
    X, s = _data(700, seed=2)
    small = X["c"] != "c"
    data = [(X[small].iloc[:300], s[small.to_numpy()][:300]), (X, s)]
    settings = {"epochs": 3, "n_ensemble": 2, "batch_size": 64, "hidden": (8,)}
    stack = LiftStack()
    stacked = [DVLift(rng=k, **settings) for k in range(2)]
    for est, (x, y) in zip(stacked, data, strict=True):
        stack.add(est, x, y)
    stack.fit()
    assert stacked[0].preprocessor_.n_features_ == 4 and stacked[1].preprocessor_.n_features_ == 5
    with one_after_another():
        alone = [DVLift(rng=k, **settings).fit(x, y) for k, (x, y) in enumerate(data)]
    for a, b in zip(stacked, alone, strict=True):
        _same_members(a, b)


def test_fit_together_mixes_settings_and_non_neural_estimators() -> None:
    from sklearn.linear_model import LogisticRegression

    X, s = _data(300)
    ests = [
        ClassifierLift(rng=1, epochs=2, n_ensemble=1, hidden=(8,)),
        ClassifierLift(rng=2, epochs=2, n_ensemble=2, hidden=(4, 4)),  # a stack of its own
        ClassifierLift(classifier=LogisticRegression(), rng=3),  # fitted by itself
    ]
    fit_together(ests, [(X, s)] * 3)
    with one_after_another():
        alone = [
            ClassifierLift(rng=1, epochs=2, n_ensemble=1, hidden=(8,)).fit(X, s),
            ClassifierLift(rng=2, epochs=2, n_ensemble=2, hidden=(4, 4)).fit(X, s),
        ]
    for a, b in zip(ests[:2], alone, strict=True):
        _same_members(a, b)
    assert ests[2].log_lift(X).shape == (300, 3)


def test_streamed_cross_fit_stacks_every_fold(tmp_path: Any) -> None:
    X, s = _data(900, seed=3)
    path = tmp_path / "records.parquet"
    X.assign(s=s).to_parquet(path, row_group_size=200)
    settings = {"rng": 2, "epochs": 2, "n_ensemble": 2, "batch_size": 64, "hidden": (8,)}
    options = {"folds": 3, "shuffle_rows": 300}
    stacked = cross_fit_source(DVLift(**settings), str(path), "s", ["x0", "x1", "c"], **options)
    with one_after_another():
        alone = cross_fit_source(DVLift(**settings), str(path), "s", ["x0", "x1", "c"], **options)
    for a, b in zip(stacked.members, alone.members, strict=True):
        _same_members(a, b)
    got = pd.concat(stacked.score_batches(str(path)))
    want = pd.concat(alone.score_batches(str(path)))
    assert np.allclose(got["risk"], want["risk"], rtol=0, atol=TOL)


@pytest.mark.parametrize("kind", ["adam", "adagrad"])
def test_stacked_optimizer_steps_like_torch_and_leaves_inactive_members(kind: str) -> None:
    gen = torch.Generator().manual_seed(0)
    start = torch.randn(3, 4, 2, generator=gen)
    ref = start[1].clone().requires_grad_(True)
    opt_cls = {"adam": torch.optim.Adam, "adagrad": torch.optim.Adagrad}[kind]
    opt = opt_cls([ref], lr=0.01, weight_decay=0.1)
    stacked = torch.nn.Parameter(start.clone())
    mine = StackedOptimizer([stacked], kind, 0.01, 0.1)
    for step in range(4):
        opt.zero_grad()
        (ref**3).sum().backward()
        opt.step()
        mine.zero_grad()
        (stacked**3).sum().backward()
        mine.step(torch.tensor([False, True, step % 2 == 0]))
    assert float((stacked[1] - ref).abs().max()) < 1e-6
    assert torch.equal(stacked[0].detach(), start[0]), "an inactive member moved"
    assert torch.equal(mine.second[0][0], torch.zeros_like(start[0])), "its moments moved"
    assert mine.steps.tolist() == [0.0, 4.0, 2.0]


def test_graph_reasons_and_no_fallback_warning_on_the_cpu() -> None:
    cuda = SimpleNamespace(type="cuda")
    est = ClassifierLift(epochs=5)
    assert _graph_reason(est, SimpleNamespace(type="cpu"), False) == "not on CUDA"
    assert _graph_reason(est, cuda, False) is None
    assert _graph_reason(est, cuda, True) == "streamed mini-batches come from the host"
    assert "dropout" in str(_graph_reason(ClassifierLift(dropout=0.1), cuda, False))
    assert "single epoch" in str(_graph_reason(ClassifierLift(epochs=1), cuda, False))
    X, s = _data(200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphFallbackWarning)
        ClassifierLift(rng=0, epochs=1, n_ensemble=2).fit(X, s)


def test_fit_score_touches_no_global_rng_and_repeats() -> None:
    X, s = _data(300)
    torch.manual_seed(11)
    np.random.seed(5)  # noqa: NPY002 - the global state under test
    before = torch.get_rng_state(), np.random.get_state()  # noqa: NPY002
    settings = {"rng": 7, "epochs": 2, "n_ensemble": 2, "hidden": (8,), "dropout": 0.1}
    first = DVLift(**settings).fit_score(X, s, cv=2, n_repeats=1)
    again = DVLift(**settings).fit_score(X, s, cv=2, n_repeats=1)
    assert torch.equal(before[0], torch.get_rng_state())
    after = np.random.get_state()  # noqa: NPY002
    assert np.array_equal(before[1][1], after[1]) and before[1][2:] == after[2:]
    assert np.array_equal(first.log_lift, again.log_lift)
