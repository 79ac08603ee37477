"""Algorithm 1 of Romanelli et al. for K stacked obfuscators (see
:mod:`privwatch.adversarial._obfuscator_stacked`).

One iteration, as :class:`~privwatch.adversarial._obfuscator_trainer.ClassifierGame` runs it
for one obfuscator: the generators' steps against the previous classifiers (from the second
iteration on), the classifiers' round from C0 on the generators' releases of the training
points, the held-out check. The iteration's random draws (generator batch orders and seeds,
the training releases' seeds, the classifier batch orders, the held-out releases' seeds) are
made first, into static buffers (:meth:`StackedClassifierGame.draw`), in each member's own
order on the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._torch import torch
from ._mi import batch_mutual_information
from ._obfuscator_stacked import StackedGame
from ._stacking import Stack

__all__ = ["StackedClassifierGame"]

F = torch.nn.functional


def _cuts(n: int, size: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


class StackedClassifierGame(StackedGame):
    """The stacked generators against K stacked classifiers reset to their C0 each round."""

    def __init__(self, models: Sequence[Any], setups: Sequence[Any]) -> None:
        super().__init__(models, setups)
        first, dev = self.first, self.dev
        self.clfs = Stack([s.clf for s in setups])
        self.c0 = {k: v.detach().clone() for k, v in self.clfs.params.items()}
        lr = first.classifier_lr
        self.c_opt = (
            torch.optim.Adam(self.clfs.parameters(), lr=lr, capturable=True, foreach=True)
            if self.on_cuda
            else torch.optim.Adam(self.clfs.parameters(), lr=lr)  # as each round's fresh Adam
        )
        n_models, n_train = self.train_s.shape
        n_rel, n_val = first.hits * n_train, first.hits * self.val_s.shape[1]
        self.g_cuts = _cuts(n_train, first.generator_batch_size)
        self.c_cuts = _cuts(n_rel, first.classifier_batch_size)
        nd, ge, ce = first.noise_dim, first.generator_epochs, first.classifier_epochs

        def empty(*shape: int, dtype: Any = torch.float32) -> Any:
            return torch.empty(shape, dtype=dtype, device=dev)

        self.g_order = empty(ge, n_models, n_train, dtype=torch.int64)
        self.g_noise = [empty(ge, n_models, hi - lo, nd) for lo, hi in self.g_cuts]
        self.r_noise = empty(n_models, n_rel, nd)
        self.c_order = empty(ce, n_models, n_rel, dtype=torch.int64)
        self.v_noise = empty(n_models, n_val, nd)
        self.stack_gen = setups[0].tg if self.on_cuda else None

    # ------------------------------------------------------------------ draws
    def draw(self, epoch: int) -> None:
        """The iteration's draws: on the CPU each member's from its own generator in the
        order of its own fit (the generator epochs' orders and seeds when ``epoch > 0``, the
        training releases' seeds, the classifier epochs' orders, the held-out seeds)."""
        if self.on_cuda:
            self._draw_stacked(epoch)
            return
        first = self.first
        for k, s in enumerate(self.setups):
            rand, perm = self._member_draws(s.tg)
            if epoch > 0:
                for e in range(first.generator_epochs):
                    self.g_order[e, k].copy_(perm(self.g_order.shape[2]))
                    for buf, (lo, hi) in zip(self.g_noise, self.g_cuts, strict=True):
                        buf[e, k].copy_(rand(hi - lo))
            self.r_noise[k].copy_(rand(self.r_noise.shape[1]))
            for e in range(first.classifier_epochs):
                self.c_order[e, k].copy_(perm(self.c_order.shape[2]))
            self.v_noise[k].copy_(rand(self.v_noise.shape[1]))

    def _member_draws(self, tg: Any) -> tuple[Any, Any]:
        """(seeds of n releases, permutation of n) drawn from the member's generator ``tg``."""
        noise_dim = self.first.noise_dim

        def rand(n: int) -> Any:
            return torch.rand((n, noise_dim), generator=tg, device=tg.device)

        def perm(n: int) -> Any:
            return torch.randperm(n, generator=tg, device=tg.device)

        return rand, perm

    def _draw_stacked(self, epoch: int) -> None:
        gen, dev = self.stack_gen, self.dev

        def order(buf: Any) -> None:
            buf.copy_(torch.rand(buf.shape, generator=gen, device=dev).argsort(-1))

        if epoch > 0:
            order(self.g_order)
            for buf in self.g_noise:
                buf.copy_(torch.rand(buf.shape, generator=gen, device=dev))
        for buf in (self.r_noise, self.v_noise):
            buf.copy_(torch.rand(buf.shape, generator=gen, device=dev))
        order(self.c_order)

    # ------------------------------------------------------------------ the iteration
    def _normalize(self, release: Any) -> Any:
        return (release - self.centre) / self.scale

    def _generator_steps(self) -> None:
        first, on_cuda = self.first, self.on_cuda
        gen_terms, classify = self.gens.function("loss_terms"), self.clfs.function("forward")
        frozen = tuple({k: v.detach() for k, v in part.items()} for part in self.clfs.state)
        mutual = first.loss == "mutual_information"

        def loss(
            gs: Any, cs: Any, x: Any, noise: Any, s: Any, onehot: Any, c: Any, sc: Any, target: Any
        ) -> Any:
            guess, dist, ce = gen_terms(gs, x, noise, s, lambda z: classify(cs, (z - c) / sc))
            utility = F.softplus(dist.mean() - target)
            privacy = batch_mutual_information(onehot.float(), guess) if mutual else -ce.mean()
            return first.alpha * utility + first.beta * privacy

        batched = torch.func.vmap(loss)
        for e in range(first.generator_epochs):
            for j, (lo, hi) in enumerate(self.g_cuts):
                idx = self.g_order[e, :, lo:hi]
                value = batched(
                    self.gens.state,
                    frozen,
                    self.train_x[self.rows, idx],
                    self.g_noise[j][e],
                    self.train_s[self.rows, idx],
                    self.train_onehot[self.rows, idx],
                    self.centre,
                    self.scale,
                    self.target,
                )
                self.g_opt.zero_grad(set_to_none=not on_cuda)
                value.sum().backward()
                self.g_opt.step()

    def _reset_classifiers(self) -> None:
        """C0's weights and a fresh Adam's state, in place."""
        with torch.no_grad():
            for name, t in self.clfs.params.items():
                t.copy_(self.c0[name])
            for state in self.c_opt.state.values():
                for v in state.values():
                    if torch.is_tensor(v):
                        v.zero_()

    def _classifier_round(self, zn: Any, sensitive: Any) -> None:
        self._reset_classifiers()
        n_models = zn.shape[0]
        for e in range(self.first.classifier_epochs):
            for lo, hi in self.c_cuts:
                idx = self.c_order[e, :, lo:hi]
                logits = self.clfs.call("forward", zn[self.rows, idx])
                target = sensitive[self.rows, idx].reshape(-1)
                ce = F.cross_entropy(logits.reshape(-1, logits.shape[2]), target, reduction="none")
                self.c_opt.zero_grad(set_to_none=not self.on_cuda)
                ce.reshape(n_models, -1).mean(dim=1).sum().backward()
                self.c_opt.step()

    def body(self, train_generator: bool) -> None:
        hits = self.first.hits
        if train_generator:
            self._generator_steps()
        with torch.no_grad():
            release = self.gens.call("forward", self.train_x.repeat(1, hits, 1), self.r_noise)
            zn = self._normalize(release)
        sensitive = self.train_s.repeat(1, hits)
        self._classifier_round(zn, sensitive)
        with torch.no_grad():
            right = self.clfs.call("forward", zn).argmax(dim=2) == sensitive
            observed = self.val_x.repeat(1, hits, 1)
            release = self.gens.call("forward", observed, self.v_noise)
            logits = self.clfs.call("forward", self._normalize(release))
            val_s = self.val_s.repeat(1, hits)
            onehot = self.val_onehot.repeat(1, hits, 1).float()
            mi = torch.func.vmap(batch_mutual_information)(onehot, torch.softmax(logits, dim=2))
            values = [
                right.float().mean(dim=1),
                (logits.argmax(dim=2) == val_s).float().mean(dim=1),
                (release - observed).norm(dim=2).mean(dim=1),
                mi,
            ]
            self.metrics.copy_(torch.stack(values, dim=1))
