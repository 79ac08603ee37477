"""Location obfuscators (budgets x seeds) trained as one stacked program.

K :class:`~privwatch.adversarial.Obfuscator` s of one generator family and attacker, on data of
one size, differ only in budget, seed (their split, initial weights and draws) and data. Their
generators (and the classifiers of Algorithm 1) are stacked
(:class:`~privwatch.adversarial._stacking.Stack`): every generator step, classifier round and
held-out check of an iteration runs on all K at once under ``vmap``. Each member keeps its own
early stopping (:class:`~privwatch.adversarial._stacking.MemberCallbacks`): its history ends
where its own fit would stop and its kept generator is its own best; the run ends when every
member has stopped (members that stopped earlier train on unseen, their results frozen).

On the CPU each member's batch orders and seeds come from its own generator in the order its
own fit draws them, so each member equals its own fit up to float rounding. On CUDA one device
generator draws the whole stack's (one launch per draw), and from the third iteration on an
iteration (generator steps, classifier round with its in-place reset, held-out check) is one
captured CUDA graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._torch import adam, graph_adam, torch
from .._trainer import Trainer
from ._exact import exact_leakage
from ._obfuscator_trainer import obfuscator_callbacks
from ._runtime import capture, warm_up
from ._stacking import MemberCallbacks, MemberView, Stack

__all__ = ["StackedBayesGame", "StackedGame"]

F = torch.nn.functional


class StackedGame(Trainer):
    """What the stacked games share: the members' setups (see ``Obfuscator._setup``), the
    stacked generators and their optimiser, the stacked data, the per-member metrics (a
    device tensor read once per iteration) and each member's own early stopping."""

    #: the per-member values of an iteration's record, in the columns of :attr:`metrics`
    KEYS = ("train_accuracy", "val_accuracy", "val_distortion", "val_mutual_information")
    min_delta = 1e-4

    def __init__(self, models: Sequence[Any], setups: Sequence[Any]) -> None:
        first = self.first = models[0]
        self.models, self.setups = list(models), list(setups)
        self.dev = setups[0].dev
        self.on_cuda = self.dev.type == "cuda"
        self.gens = Stack([s.gen for s in setups])
        self.g_opt = (graph_adam if self.on_cuda else adam)(
            self.gens.parameters(), first.generator_lr, *([self.dev] if self.on_cuda else [])
        )
        self.train_x, self.train_s, self.val_x, self.val_s = (
            torch.stack([getattr(s, part)[i] for s in setups])
            for part in ("train", "valid")
            for i in (0, 1)
        )
        n_users = setups[0].n_users
        self.train_onehot = F.one_hot(self.train_s, n_users)
        self.val_onehot = F.one_hot(self.val_s, n_users)
        self.rows = torch.arange(len(models), device=self.dev)[:, None]
        self.target = torch.tensor([s.target for s in setups], device=self.dev)
        self.centre = torch.tensor(np.stack([m._centre for m in models]), dtype=torch.float32)
        self.centre = self.centre.to(self.dev)[:, None, :]
        self.scale = torch.tensor([m._scale for m in models], device=self.dev)[:, None, None]
        self.metrics = torch.zeros(
            len(models), len(self.KEYS), dtype=torch.float64, device=self.dev
        )
        self.member_records: list[dict[str, float]] = []
        self.members = MemberCallbacks(
            models,
            [
                obfuscator_callbacks(m, MemberView(self.gens, k, s.gen), self.min_delta)
                for k, (m, s) in enumerate(zip(models, setups, strict=True))
            ],
        )
        self.graph: Any = None
        self.reason = self._graph_reason()
        super().__init__(first, epochs=first.max_iter, callbacks=[self.members])

    def _graph_reason(self) -> str | None:
        if not self.on_cuda:
            return "not on CUDA"
        if not self.first.cuda_graph:
            return "cuda_graph=False"
        if self.first.max_iter < 3:
            return "fewer than 3 iterations leave nothing to replay"
        return None

    def draw(self, epoch: int) -> None:
        """The iteration's random draws into static buffers (none by default)."""

    def body(self, train_generator: bool) -> None:
        """One iteration on static buffers, its measurements into :attr:`metrics`."""
        raise NotImplementedError

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.draw(epoch)
        if epoch == 0 or self.reason is not None:
            self.body(epoch > 0)
        elif self.graph is not None:
            self.graph.replay()
        elif epoch == 1:  # the eager warm-up of the iteration the graph will hold
            warm_up(lambda: self.body(True), self.dev)
        else:
            self.graph, self.reason = capture(lambda: self.body(True), "the iteration")
            if self.graph is not None:
                self.graph.replay()
            else:
                self.body(True)
        values = self.metrics.cpu().tolist()
        self.member_records = [dict(zip(self.KEYS, row, strict=True)) for row in values]
        return {}

    def unstack(self) -> None:
        """Each member's fitted attributes (its kept generator was restored by its early
        stopping at the end of the run)."""
        for k, (m, s) in enumerate(zip(self.models, self.setups, strict=True)):
            m._finish(self.members.histories[k], self.members.callbacks[k], self.graph is not None)
            m.generator_ = s.gen


class StackedBayesGame(StackedGame):
    """``attacker="bayes"`` stacked: each iteration ``generator_epochs`` full-batch steps on
    the exact leakage (from the second on), then the Bayes attacker's check; no random draw."""

    min_delta = 1e-6

    def _leakage(self, state: Any, points: Any, onehot: Any) -> tuple[Any, Any, Any]:
        p, d = self.gens.function("probs")(state, points)
        mi, bayes_error = exact_leakage(p.double(), onehot.double())
        return mi, bayes_error, (p * d).sum(dim=1).mean()

    def body(self, train_generator: bool) -> None:
        first, on_cuda = self.first, self.on_cuda

        def loss(state: Any, x: Any, onehot: Any, target: Any) -> Any:
            mi, _, dist = self._leakage(state, x, onehot)
            return first.alpha * F.softplus(dist - target) + first.beta * mi.float()

        if train_generator:
            for _ in range(first.generator_epochs):
                value = torch.func.vmap(loss)(
                    self.gens.state, self.train_x, self.train_onehot, self.target
                )
                self.g_opt.zero_grad(set_to_none=not on_cuda)
                value.sum().backward()
                self.g_opt.step()
        with torch.no_grad():
            leak = torch.func.vmap(self._leakage)
            _, err_tr, _ = leak(self.gens.state, self.train_x, self.train_onehot)
            mi, err_va, dist = leak(self.gens.state, self.val_x, self.val_onehot)
            self.metrics.copy_(torch.stack([1.0 - err_tr, 1.0 - err_va, dist, mi], dim=1))
