"""Finite-alphabet PPANs of one curve trained side by side as one stacked model.

The points of a privacy-utility curve are PPANs of identical shapes and settings that differ in
budget, data and seed. Stacking their parameters along a leading axis and summing their
objectives gives every model exactly its own gradient, and Adam is elementwise, so one optimiser
step on the stack is one step of every model — the same arithmetic as fitting them one by one,
with the per-step overhead of torch paid once per curve instead of once per point.

On CUDA the stack lives on the device (data moved once), the batch orders of all models come
from one device generator (one launch per epoch), Adam keeps its state on the device, and from
the second epoch on a whole epoch is one captured CUDA graph replayed once per epoch (the first
epoch runs eagerly and warms the graph up). Histories stay on the device until the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._cuda_graph import graphed_epoch, run_stacked
from .._device import resolve_device
from .._rng import check_rng
from .._torch import generator_from, graph_adam, torch
from .._trainer import History, Trainer
from ._families import (
    CategoricalAdversary,
    FactoredMechanism,
    MatrixMechanism,
    factored_logits,
)
from ._ppan_trainer import ppan_callbacks

__all__ = ["can_stack", "fit_stacked"]

_SHARED = (
    "epochs",
    "batch_size",
    "adversary_steps",
    "lr",
    "adversary_lr",
    "schedule",
    "penalty",
    "lam",
    "device",
    "cuda_graph",
)


def _mech_params(mech: Any) -> list[Any]:
    if isinstance(mech, FactoredMechanism):
        return [*mech.factors, mech.interaction]
    return [mech.logits]


def can_stack(models: Sequence[Any], samples: Sequence[Any]) -> bool:
    """True when ``models`` are unfitted-shape-compatible finite PPANs that one stacked run can
    fit: matrix or factored mechanisms of one shape, the paper's matrix adversary, no
    discriminator or callbacks, the same settings but the budget, and data of one length."""
    from ._ppan import PPAN

    first = models[0]
    if len(models) < 2 or not all(type(m) is PPAN for m in models):
        return False
    if not all(type(m.mechanism) in (MatrixMechanism, FactoredMechanism) for m in models):
        return False
    kinds = {(type(m.mechanism), tuple(p.shape for p in _mech_params(m.mechanism))) for m in models}
    if len(kinds) != 1:
        return False
    for m in models:
        adv = m.adversary
        net: Any = getattr(adv, "net", None)
        linear = net is not None and isinstance(net, torch.nn.Linear)
        if not (type(adv) is CategoricalAdversary and linear and net.bias is None):
            return False
        if m.discriminator is not None or m.callbacks or m.progress:
            return False
        if isinstance(m.distortion, torch.nn.Module):  # a learned distortion (App. D)
            return False
        if any(getattr(m, k) != getattr(first, k) for k in _SHARED):
            return False
        if net.weight.shape != first.adversary.net.weight.shape:
            return False
    lengths = {len(np.asarray(t[0])) for t in samples}
    return len(lengths) == 1


def _graph_reason(first: Any, dev: Any) -> str | None:
    """Why this stacked fit cannot run as a CUDA graph (None: it can)."""
    if dev.type != "cuda":
        return "not on CUDA"
    if not first.cuda_graph:
        return "cuda_graph=False"
    if first.schedule != "constant":
        return f"schedule={first.schedule!r} changes the step size between epochs"
    if first.epochs < 2:
        return "a single epoch leaves nothing to replay"
    return None


def fit_stacked(models: Sequence[Any], samples: Sequence[Any]) -> list[Any]:
    """Fit ``models`` (see :func:`can_stack`) in one stacked run on their
    ``(observed, sensitive[, useful])`` samples; returns them fitted, each with its own
    history, exactly as their own ``fit`` would up to float rounding (on the CPU, where each
    keeps its own batch order; on CUDA the orders come from one device generator seeded from
    the first model's ``rng``)."""
    first = models[0]
    for m in models:
        m._validate()
    trainer = StackedTrainer(models, samples, resolve_device(first.device))
    run_stacked(trainer, first.cuda_graph, "the stacked PPAN fit")
    return list(models)


class StackedTrainer(Trainer):
    """The PPAN game of M models at once: one epoch is :meth:`epoch_body` over a stacked batch
    order (eager, or replayed as one CUDA graph from the second epoch on); the per-model means
    stay on the device until :meth:`unstack`."""

    def __init__(self, models: Sequence[Any], samples: Sequence[Any], dev: Any) -> None:
        first = self.first = models[0]
        self.models, self.dev = list(models), dev
        self.on_cuda = dev.type == "cuda"
        if self.on_cuda:  # one generator for the batch orders of the whole stack
            self.stack_gen = generator_from(check_rng(first.rng), dev)
            self.gens = [generator_from(check_rng(m.rng), dev) for m in models]
        else:  # batch orders as PPAN.fit, one generator per model
            self.gens = [generator_from(check_rng(m.rng)) for m in models]
        for m in models:  # each model trains (and keeps) copies of its given modules
            m.copy_modules(dev)
        data = [m._tensors(*t) for m, t in zip(models, samples, strict=True)]
        self.observed, self.sensitive, self.useful = (
            torch.stack([d[i] for d in data]).to(dev) for i in range(3)
        )
        n_models, n = self.observed.shape
        self.mech_params = [
            torch.nn.Parameter(torch.stack([p.detach() for p in ps]).to(dev))
            for ps in zip(*(_mech_params(m.mechanism_) for m in models), strict=True)
        ]
        self.adv_w = torch.nn.Parameter(
            torch.stack([m.adversary_.net.weight.detach() for m in models]).to(dev)
        )
        self.budget = torch.tensor([float(m.budget) for m in models], device=dev)
        self.mech_opt = graph_adam(self.mech_params, first.lr, dev)
        self.adv_opt = graph_adam([self.adv_w], first.adversary_lr or first.lr, dev)
        self.factored = isinstance(first.mechanism, FactoredMechanism)
        self.codes: Any = first.mechanism_.codes.to(dev) if self.factored else None
        self.order = torch.empty((n_models, n), dtype=torch.int64, device=dev)
        self.sums = torch.zeros(2, n_models, device=dev)
        self.hist = torch.zeros(first.epochs, 2, n_models, device=dev)
        self.graph: Any = None
        self.reason = _graph_reason(first, dev)
        super().__init__(
            first,
            epochs=first.epochs,
            callbacks=ppan_callbacks(first, [self.mech_opt, self.adv_opt]),
            n_samples=n,
        )

    def _rows(self, observed: Any) -> Any:  # (M, b, n_outputs) release probabilities
        logits = self.mech_params[-1]
        if self.factored:
            logits = factored_logits(self.mech_params[:-1], logits, self.codes)
        index = observed[..., None].expand(-1, -1, logits.shape[2])
        return torch.softmax(logits.gather(1, index), 2)

    def _log_likelihood(self, release: Any, sensitive: Any) -> Any:  # (M, b), eq. (6)
        log_post = torch.log_softmax(self.adv_w.transpose(1, 2), dim=2)  # (M, n_out, n_s)
        picked = log_post.gather(2, sensitive[:, None, :].expand(-1, log_post.shape[1], -1))
        return (release * picked.transpose(1, 2)).sum(dim=2)

    def epoch_body(self) -> None:
        """One pass over the batches of ``order``; static shapes (capturable)."""
        first, on_cuda = self.first, self.on_cuda
        self.sums.zero_()
        for lo in range(0, self.n_samples, first.batch_size):
            idx = self.order[:, lo : lo + first.batch_size]
            ob, se, us = (t.gather(1, idx) for t in (self.observed, self.sensitive, self.useful))
            for _ in range(first.adversary_steps):
                with torch.no_grad():
                    release = self._rows(ob)
                loss = -self._log_likelihood(release, se).mean(dim=1).sum()
                self.adv_opt.zero_grad(set_to_none=not on_cuda)
                loss.backward()
                self.adv_opt.step()
            release = self._rows(ob)
            privacy = self._log_likelihood(release, se)
            flat = release.reshape(-1, release.shape[2])
            dist = first.distortion(us.reshape(-1), flat).reshape(us.shape)
            loss = (privacy.mean(dim=1) + first.penalty_term(dist, self.budget)).sum()
            self.mech_opt.zero_grad(set_to_none=not on_cuda)
            loss.backward()
            self.mech_opt.step()
            with torch.no_grad():
                means = torch.stack([privacy.mean(dim=1), dist.mean(dim=1)])
                self.sums.add_(means * idx.shape[1])

    def train_epoch(self, epoch: int) -> dict[str, float]:
        n_models, n = self.order.shape
        if self.on_cuda:
            keys = torch.rand((n_models, n), generator=self.stack_gen, device=self.dev)
            self.order.copy_(keys.argsort(1))
        else:
            self.order.copy_(torch.stack([torch.randperm(n, generator=g) for g in self.gens]))
        graphed_epoch(self, epoch, "the epoch")
        self.hist[epoch].copy_(self.sums)
        return {}

    def unstack(self) -> None:
        """Copy the stacked weights back into each model (on the device) with its own
        history."""
        hist = (self.hist.cpu().double() / self.n_samples).numpy()
        with torch.no_grad():
            for k, m in enumerate(self.models):
                for p, stacked in zip(_mech_params(m.mechanism_), self.mech_params, strict=True):
                    p.copy_(stacked[k])
                m.adversary_.net.weight.copy_(self.adv_w[k])
                m.history_ = History(
                    {
                        "epoch": e,
                        "log_likelihood": float(hist[e, 0, k]),
                        "distortion": float(hist[e, 1, k]),
                    }
                    for e in range(hist.shape[0])
                )
                m._generator = self.gens[k]
                m.mechanism_.eval()
                m.adversary_.eval()
                m.cuda_graph_ = self.graph is not None
                m.fitted_ = True
