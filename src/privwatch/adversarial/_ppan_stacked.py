"""Continuous PPANs of one curve (its points, its seeds) trained as one stacked program.

The networks of M PPANs of one architecture (a seed-noise, Gaussian or Gaussian-mixture
mechanism; any adversary and optional realism discriminator) are stacked
(:class:`~privwatch.adversarial._stacking.Stack`) and every step of the game runs on all of
them at once under ``vmap``; the distortion (any per-sample function) is applied to the
flattened releases. Members may differ in budget, penalty weight ``lam``, seed, initial weights
and data (of one length); everything else is shared.

Random draws stay outside the stacked program: on the CPU each member's batch order and noise
come from its own generator in the order its own :meth:`PPAN.fit` draws them, so each member
equals its own fit up to float rounding; on CUDA one device generator draws the whole epoch's
order and noise for the stack (one launch each), and from the second epoch on the epoch is one
captured CUDA graph.
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
from ._families import over_components
from ._ppan_trainer import ppan_callbacks
from ._stacked import _graph_reason
from ._stacking import Stack, same_architecture

__all__ = ["can_stack_continuous", "fit_stacked_continuous"]

_SHARED = (
    "epochs",
    "batch_size",
    "adversary_steps",
    "lr",
    "adversary_lr",
    "schedule",
    "penalty",
    "gamma",
    "device",
    "cuda_graph",
)


def _stackable_mechanism(mech: Any) -> bool:
    noise = hasattr(mech, "draw_noise")
    return (
        noise
        and not getattr(mech, "exact", False)
        and (hasattr(mech, "release_from") or hasattr(mech, "components_from"))
    )


def can_stack_continuous(models: Sequence[Any], samples: Sequence[Any]) -> bool:
    """True when ``models`` are continuous PPANs one stacked run can fit: given networks of one
    architecture (a mechanism that draws its noise apart, :meth:`draw_noise`), one plain
    per-sample distortion function, no callbacks or progress bar, the same settings but
    ``budget``, ``lam`` and ``rng``, and data arrays of one shape."""
    from ._ppan import PPAN

    if len(models) < 2 or not all(type(m) is PPAN for m in models):
        return False
    first = models[0]
    for m in models:
        if m.mechanism is None or m.adversary is None or m.distortion is None:
            return False  # networks built from the data in fit: left to it
        if not _stackable_mechanism(m.mechanism) or isinstance(m.distortion, torch.nn.Module):
            return False
        if m.callbacks or m.progress or m.distortion is not first.distortion:
            return False
        if any(getattr(m, k) != getattr(first, k) for k in _SHARED):
            return False
        if (m.discriminator is None) != (first.discriminator is None):
            return False
    for name in ("mechanism", "adversary", "discriminator"):
        given = [getattr(m, name) for m in models]
        if given[0] is not None and not same_architecture(given):
            return False
    shapes = {tuple(np.shape(a) for a in t) for t in samples}
    return len(shapes) == 1 and len(next(iter(shapes))) in (2, 3)


def fit_stacked_continuous(models: Sequence[Any], samples: Sequence[Any]) -> list[Any]:
    """Fit ``models`` (see :func:`can_stack_continuous`) in one stacked run on their
    ``(observed, sensitive[, useful])`` samples; returns them fitted, each with its own
    history, as their own ``fit`` would up to float rounding (on the CPU)."""
    first = models[0]
    for m in models:
        m._validate()
    trainer = ContinuousStackedTrainer(models, samples, resolve_device(first.device))
    run_stacked(trainer, first.cuda_graph, "the stacked PPAN fit")
    return list(models)


class ContinuousStackedTrainer(Trainer):
    """The PPAN game of M continuous models at once. Each epoch: the batch orders and every
    noise draw into static buffers (:meth:`draw_epoch`), then :meth:`epoch_body` (eager, or
    replayed as one CUDA graph from the second epoch on)."""

    def __init__(self, models: Sequence[Any], samples: Sequence[Any], dev: Any) -> None:
        first = self.first = models[0]
        self.models, self.dev, self.on_cuda = list(models), dev, dev.type == "cuda"
        for m, t in zip(models, samples, strict=True):  # as PPAN.fit: copies, own generator
            m._start_fit(*t)
        data = [m._tensors(*t) for m, t in zip(models, samples, strict=True)]
        self.data = [torch.stack([d[i] for d in data]) for i in range(3)]
        n_models, n = self.data[0].shape[:2]
        self.rows = torch.arange(n_models, device=dev)[:, None]
        self.mech = Stack([m.mechanism_ for m in models])
        self.adv = Stack([m.adversary_ for m in models])
        self.mixture = hasattr(first.mechanism_, "components_from")
        self.disc = (
            None if first.discriminator_ is None else Stack([m.discriminator_ for m in models])
        )
        self.realism = self.disc is not None and bool(first.gamma)
        self.budget = torch.tensor([float(m.budget) for m in models], device=dev)
        self.lam = torch.tensor([float(m.lam) for m in models], device=dev)
        self.mech_opt = graph_adam(self.mech.parameters(), first.lr, dev)
        self.adv_opt = graph_adam(self.adv.parameters(), first.adversary_lr or first.lr, dev)
        optimisers = [self.mech_opt, self.adv_opt]
        if self.disc is not None:
            self.disc_opt = graph_adam(self.disc.parameters(), first.lr, dev)
            optimisers.append(self.disc_opt)
        self.stack_gen = generator_from(check_rng(first.rng), dev) if self.on_cuda else None
        self.slots = first.adversary_steps * (2 if self.realism else 1) + 1
        self.order = torch.empty((n_models, n), dtype=torch.int64, device=dev)
        tail = tuple(first.mechanism_.draw_noise(1, torch.Generator()).shape[1:])
        self.noise = [  # per batch: (slots, M, b, *noise shape)
            torch.empty((self.slots, n_models, len(range(lo, min(lo + size, n))), *tail)).to(dev)
            for size in [first.batch_size]
            for lo in range(0, n, size)
        ]
        self.sums = torch.zeros(2, n_models, device=dev)
        self.hist = torch.zeros(first.epochs, 2, n_models, device=dev)
        self.graph: Any = None
        self.reason = _graph_reason(first, dev)
        super().__init__(
            first, epochs=first.epochs, callbacks=ppan_callbacks(first, optimisers), n_samples=n
        )

    # ------------------------------------------------------------------ draws
    def draw_epoch(self) -> None:
        """The epoch's batch orders and noise, in place: on the CPU from each member's own
        generator in its own fit's order (the order, then per batch each adversary step's,
        discriminator step's and the mechanism step's noise); on CUDA from the stack's."""
        n_models, n = self.order.shape
        if self.on_cuda:
            keys = torch.rand((n_models, n), generator=self.stack_gen, device=self.dev)
            self.order.copy_(keys.argsort(1))
            for buf in self.noise:
                count = buf.shape[0] * buf.shape[1] * buf.shape[2]
                fresh = self.first.mechanism_.draw_noise(count, self.stack_gen, self.dev)
                buf.copy_(fresh.reshape(buf.shape))
            return
        for k, m in enumerate(self.models):
            gen = m._generator
            self.order[k].copy_(torch.randperm(n, generator=gen, device=gen.device))
            for buf in self.noise:
                for s in range(self.slots):
                    buf[s, k].copy_(m.mechanism_.draw_noise(buf.shape[2], gen, gen.device))

    # ------------------------------------------------------------------ the game, stacked
    def _release(self, observed: Any, noise: Any, sample: bool = False) -> Any:
        """(M, b, ...) releases (``sample``: one sampled release, as the discriminator sees)."""
        if self.mixture and not sample:
            return self.mech.call("components_from", observed, noise)
        return self.mech.call("release_from", observed, noise)

    def _log_likelihood(self, sensitive: Any, release: Any) -> Any:  # (M, b)
        one = self.adv.function("log_likelihood")

        def member(state: Any, s: Any, r: Any) -> Any:
            return over_components(lambda t, z: one(state, t, z), s, r)

        return torch.func.vmap(member)(self.adv.state, sensitive, release)

    def _distortion(self, useful: Any, release: Any) -> Any:  # (M, b), flattened
        lead = useful.shape[:2]
        flat_u = useful.reshape(-1, *useful.shape[2:])
        if isinstance(release, tuple):
            flat_r: Any = tuple(t.reshape(-1, *t.shape[2:]) for t in release)
        else:
            flat_r = release.reshape(-1, *release.shape[2:])
        return over_components(self.first.distortion_, flat_u, flat_r).reshape(lead)

    def _log_d(self, release: Any) -> Any:  # (M, b): log D(release)
        assert self.disc is not None
        d = self.disc.call("forward", release).clamp(1e-6, 1 - 1e-6)
        return d.log().flatten(1)

    def _step(self, opt: Any, loss: Any) -> None:
        opt.zero_grad(set_to_none=not self.on_cuda)
        loss.backward()
        opt.step()

    def _batch(self, ob: Any, se: Any, us: Any, noise: Any) -> None:
        slot = 0
        for _ in range(self.first.adversary_steps):
            with torch.no_grad():
                release = self._release(ob, noise[slot])
            slot += 1
            self._step(self.adv_opt, -self._log_likelihood(se, release).mean(dim=1).sum())
            if self.realism:
                with torch.no_grad():
                    sample = self._release(ob, noise[slot], sample=True)
                slot += 1
                assert self.disc is not None
                log_real = (1 - self.disc.call("forward", us).clamp(1e-6, 1 - 1e-6)).log()
                loss = -(self._log_d(sample).mean(dim=1) + log_real.flatten(1).mean(dim=1))
                self._step(self.disc_opt, loss.sum())
        release = self._release(ob, noise[slot])
        privacy = self._log_likelihood(se, release)
        dist = self._distortion(us, release)
        loss = privacy.mean(dim=1) + self.first.penalty_term(dist, self.budget, self.lam)
        if self.realism:
            loss = loss + self.first.gamma * self._log_d(release).mean(dim=1)
        self._step(self.mech_opt, loss.sum())
        with torch.no_grad():
            self.sums.add_(torch.stack([privacy.mean(dim=1), dist.mean(dim=1)]) * ob.shape[1])

    def epoch_body(self) -> None:
        """One pass over the batches of :attr:`order` with the drawn noise; static shapes."""
        self.sums.zero_()
        size = self.first.batch_size
        for j, lo in enumerate(range(0, self.n_samples, size)):
            idx = self.order[:, lo : lo + size]
            ob, se, us = (t[self.rows, idx] for t in self.data)
            self._batch(ob, se, us, self.noise[j])

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.draw_epoch()
        graphed_epoch(self, epoch, "the epoch")
        self.hist[epoch].copy_(self.sums)
        return {}

    def unstack(self) -> None:
        """Each member's weights back into its own modules, with its own history."""
        hist = (self.hist.cpu().double() / self.n_samples).numpy()
        for k, m in enumerate(self.models):
            self.mech.load_member(k, m.mechanism_)
            self.adv.load_member(k, m.adversary_)
            if self.disc is not None:
                self.disc.load_member(k, m.discriminator_)
            m.history_ = History(
                {
                    "epoch": e,
                    "log_likelihood": float(hist[e, 0, k]),
                    "distortion": float(hist[e, 1, k]),
                }
                for e in range(len(self.history))
            )
            m.mechanism_.eval()
            m.adversary_.eval()
            m.cuda_graph_ = self.graph is not None
            m.fitted_ = True
