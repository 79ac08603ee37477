"""device= on the adversarial family; CUDA graphs (tests marked gpu). The global random state
and same-seed checks live in tests/test_rng_state.py."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from privwatch import ValidationError
from privwatch.adversarial import (
    PPAN,
    GaussianAdversary,
    GraphFallbackWarning,
    Obfuscator,
    SeedNoiseMechanism,
    fit_many,
    squared_error,
)
from privwatch.datasets import symmetric_pair

HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")


def _finite(delta: float, rng: int, epochs: int = 10, **params: Any) -> PPAN:
    return PPAN.finite(
        1 - np.eye(3),
        n_observed=3,
        n_sensitive=3,
        budget=delta,
        epochs=epochs,
        lr=0.05,
        adversary_lr=0.1,
        rng=rng,
        **params,
    )


def _points(n: int = 120) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(0)
    users = np.repeat(np.arange(3), n // 3)
    centres = np.array([[0.0, 0.0], [400.0, 0.0], [0.0, 400.0]])
    return centres[users] + 150 * g.standard_normal((n, 2)), users


def test_local_initialisation_draws_what_a_global_seed_would() -> None:
    """PPAN.finite(rng=...) keeps the initial adversary of the committed experiments."""
    ppan = _finite(0.2, rng=11)
    seed = int(np.random.default_rng(11).integers(0, 2**62))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        reference = torch.nn.Linear(3, 3, bias=False).weight.detach()
    assert torch.equal(ppan.adversary.net.weight.detach().cpu(), reference)


def test_device_errors() -> None:
    d = symmetric_pair(50, m=3, p=0.3, observation="useful", rng=0)
    with pytest.raises(ValidationError, match="`device` must be"):
        _finite(0.2, rng=0, device="tpu").fit(d.observed, d.sensitive, d.useful)
    pts, users = _points()
    with pytest.raises(ValidationError, match="`device` must be"):
        Obfuscator(300.0, max_iter=1, device=3).fit(pts, users)
    if not HAS_CUDA:
        with pytest.raises(ValidationError, match="no CUDA device"):
            _finite(0.2, rng=0, device="cuda").fit(d.observed, d.sensitive, d.useful)
        with pytest.raises(ValidationError, match="no CUDA device"):
            Obfuscator(300.0, max_iter=1, device="cuda:0").fit(pts, users)


def test_cpu_device_and_auto_give_numpy_results() -> None:
    d = symmetric_pair(100, m=3, p=0.3, observation="useful", rng=0)
    m = _finite(0.2, rng=0, device="auto").fit(d.observed, d.sensitive, d.useful)
    assert isinstance(m.channel(), np.ndarray) and isinstance(m.release(d.observed[:5]), np.ndarray)
    assert _finite(0.2, rng=0, device="cpu").get_params()["device"] == "cpu"


# ---------------------------------------------------------------------------- CUDA
@pytest.mark.gpu
@needs_cuda
def test_stacked_cuda_graph_equals_eager_cuda() -> None:
    sets = [symmetric_pair(300, m=3, p=0.3, observation="useful", rng=s) for s in range(4)]
    data = [(s.observed, s.sensitive, s.useful) for s in sets]
    deltas = [0.0, 0.2, 0.4, 0.6]

    def curve(graph: bool) -> list[PPAN]:
        ms = [
            _finite(dl, rng=k, epochs=30, device="cuda", cuda_graph=graph)
            for k, dl in enumerate(deltas)
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphFallbackWarning)
            return fit_many(ms, data)

    graphed, eager = curve(True), curve(False)
    assert all(m.cuda_graph_ for m in graphed) and not any(m.cuda_graph_ for m in eager)
    for a, b in zip(graphed, eager, strict=True):
        np.testing.assert_allclose(a.channel(), b.channel(), atol=1e-5)
        np.testing.assert_allclose(
            a.history_.column("log_likelihood"), b.history_.column("log_likelihood"), atol=1e-5
        )


@pytest.mark.gpu
@needs_cuda
def test_cuda_graph_fallback_says_why() -> None:
    d = symmetric_pair(200, m=3, p=0.3, observation="useful", rng=0)
    ms = [_finite(dl, rng=k, device="cuda", schedule="cosine") for k, dl in enumerate([0.1, 0.4])]
    with pytest.warns(GraphFallbackWarning, match="cosine"):
        fitted = fit_many(ms, (d.observed, d.sensitive, d.useful))
    assert not fitted[0].cuda_graph_


@pytest.mark.gpu
@needs_cuda
def test_gpu_curve_is_within_the_cpu_seed_spread() -> None:
    """The useful-data curve (experiment settings, 200 epochs) on CUDA (graph) vs 4 CPU seeds:
    each GPU point's excess over the optimum lies within the CPU seeds' range (+- 0.005)."""
    deltas = [0.0, 0.2, 0.4, 0.6]
    cfg: dict[str, Any] = {"lam": 500.0, "batch_size": 100, "lr": 0.05, "adversary_lr": 0.1}
    cfg |= {"adversary_steps": 5, "epochs": 200}
    m = 10

    def excess(device: str, seed: int) -> list[float]:
        sets = [
            symmetric_pair(1000, m=m, p=0.4, observation="useful", rng=100 * seed + k)
            for k in range(len(deltas))
        ]
        models = [
            PPAN.finite(
                1 - np.eye(m),
                n_observed=m,
                n_sensitive=m,
                budget=dl,
                rng=seed,
                device=device,
                **cfg,
            )
            for dl in deltas
        ]
        fitted = fit_many(models, [(s.observed, s.sensitive, s.useful) for s in sets])
        out = []
        for s, p in zip(sets, fitted, strict=True):
            mi, dist = s.evaluate(p.channel())
            out.append(mi - s.optimum(dist))
        return out

    cpu = np.array([excess("cpu", seed) for seed in range(4)])
    gpu = np.array([excess("cuda", seed) for seed in range(2)])
    lo, hi = cpu.min(axis=0) - 0.005, cpu.max(axis=0) + 0.005
    assert np.all((gpu >= lo) & (gpu <= hi)), (cpu, gpu)


@pytest.mark.gpu
@needs_cuda
def test_cuda_fits_return_numpy_and_save_loads_on_the_cpu(tmp_path: Path) -> None:
    g = np.random.default_rng(0)
    x = g.standard_normal((200, 1))
    mech, adv = SeedNoiseMechanism(1, 1, hidden=(4,)), GaussianAdversary(1, 1, hidden=(4,))
    p = PPAN(mech, adv, squared_error, budget=0.3, epochs=3, batch_size=50, rng=0, device="cuda")
    z = p.fit(x, x, x).release(x, rng=0)
    assert isinstance(z, np.ndarray) and z.shape == (200, 1) and len(p.history_) == 3
    pts, users = _points()
    obf = Obfuscator(
        300.0, max_iter=3, hits=2, classifier_epochs=1, generator_epochs=1, rng=0, device="cuda"
    ).fit(pts, users)
    assert next(obf.generator_.parameters()).is_cuda
    obf.save(tmp_path / "obf.json")
    loaded = Obfuscator.load(tmp_path / "obf.json")
    assert all(not t.is_cuda for t in loaded.generator_.state_dict().values())
    for k, v in obf.generator_.state_dict().items():
        assert torch.equal(v.cpu(), loaded.generator_.state_dict()[k])
    assert isinstance(loaded.release(pts[:5], rng=0), np.ndarray)


@pytest.mark.gpu
@needs_cuda
@pytest.mark.xfail(
    reason="failed on the H100 (2026-11-23, one run; which assertion was not captured): the "
    "graphed classifier rounds differ from the eager ones by more than these tolerances; open",
    strict=False,
)
def test_obfuscator_classifier_graph_equals_eager() -> None:
    pts, users = _points(300)

    def fit(graph: bool) -> Obfuscator:
        return Obfuscator(
            300.0,
            max_iter=4,
            patience=10,
            hits=4,
            classifier_epochs=3,
            classifier_batch_size=64,
            generator_epochs=2,
            rng=0,
            device="cuda",
            cuda_graph=graph,
        ).fit(pts, users)

    graphed, eager = fit(True), fit(False)
    assert graphed.cuda_graph_ and not eager.cuda_graph_
    # float32 rounding differs (capturable vs plain Adam), and the adversarial game amplifies
    # it: the first round agrees to rounding, later ones within a few samples' accuracy
    first_g, first_e = graphed.history_[0], eager.history_[0]
    assert first_g["train_accuracy"] == pytest.approx(first_e["train_accuracy"], abs=1e-3)
    for a, b in zip(graphed.history_, eager.history_, strict=True):
        assert a["train_accuracy"] == pytest.approx(b["train_accuracy"], abs=1e-2)
        assert a["val_mutual_information"] == pytest.approx(b["val_mutual_information"], abs=1e-2)
    np.testing.assert_allclose(graphed.release(pts, rng=1), eager.release(pts, rng=1), atol=5.0)
