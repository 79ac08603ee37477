"""The classifier rounds of Algorithm 1 (Romanelli et al.): C_i = train(C_0, G_{i-1}'s releases).

Each round resets the classifier to C_0 and trains it with a fresh Adam for ``epochs`` passes
over the releases in mini-batches. On the CPU (and on CUDA with ``graph=False``) that is a plain
loop with a new ``torch.optim.Adam`` per round. On CUDA with ``graph=True`` the releases, the
batch order and Adam's state live in static device buffers, the round's reset is an in-place
copy of C_0 and a zeroing of Adam's moments and step (the state of a fresh Adam), and one epoch
— every mini-batch's forward, backward and step — is one captured CUDA graph, replayed
``epochs`` times per round (the very first epoch runs eagerly as the warm-up).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from .._torch import build_seeded, mlp, reinit_linear, torch
from ._runtime import GraphFallbackWarning, capture, warm_up

__all__ = ["ClassifierRounds", "initial_classifier"]


def initial_classifier(n_users: int, hidden: Sequence[int], tinit: Any) -> Any:
    """C_0, the classifier every round starts from: an MLP from a location to ``n_users``
    logits with Glorot-uniform weights and zero biases, as the paper's (drawn from the
    ``torch.Generator`` ``tinit`` after the draws torch's default initialisation makes)."""
    clf0 = build_seeded(lambda: mlp(2, tuple(hidden), n_users), None)
    reinit_linear(clf0, tinit)
    for layer in clf0:
        if isinstance(layer, torch.nn.Linear):
            torch.nn.init.xavier_uniform_(layer.weight, generator=tinit)
            torch.nn.init.zeros_(layer.bias)
    return clf0


class ClassifierRounds:
    """Train ``clf`` from ``c0_state`` on (normalised releases, users) once per round."""

    def __init__(
        self,
        clf: Any,
        c0_state: dict[str, Any],
        *,
        lr: float,
        epochs: int,
        batch_size: int,
        graph: bool,
    ) -> None:
        self.clf, self.c0_state = clf, c0_state
        self.lr, self.epochs, self.batch_size = lr, epochs, batch_size
        self.graph_wanted = graph
        self.graph: Any = None
        self.reason: str | None = None
        self._static: tuple[Any, Any, Any] | None = None
        self._opt: Any = None

    def train(self, zn: Any, x: Any, tg: Any) -> None:
        """One round: reset to C_0, then ``epochs`` passes over ``(zn, x)`` (normalised
        releases, user codes) in batches drawn from the generator ``tg``."""
        if not (self.graph_wanted and zn.is_cuda and self.reason is None):
            self._eager(zn, x, tg)
            return
        if self._static is not None and self._static[0].shape != zn.shape:
            self._fallback("the number of releases changed between rounds")
            self._eager(zn, x, tg)
            return
        self._reset()
        if self._static is None:  # first round: allocate, and run the warm-up epoch
            order = torch.randperm(len(zn), generator=tg, device=zn.device)
            self._static = (zn.clone(), x.clone(), order)
            self._opt = torch.optim.Adam(
                self.clf.parameters(), lr=self.lr, capturable=True, foreach=True
            )
        zs, xs, order = self._static
        zs.copy_(zn)
        xs.copy_(x)
        self.clf.train()
        for epoch in range(self.epochs):
            order.copy_(torch.randperm(len(zn), generator=tg, device=zn.device))
            if self.graph is not None:
                self.graph.replay()
            elif epoch == 0 and not self._opt.state:  # eager warm-up on a side stream
                warm_up(self._epoch, zn.device)
            else:
                self._capture()
                if self.graph is None:  # capture failed: this round and the next run eagerly
                    self._epoch()
                else:
                    self.graph.replay()
        self.clf.eval()

    # ------------------------------------------------------------------ pieces
    def _epoch(self) -> None:
        assert self._static is not None
        zs, xs, order = self._static
        for lo in range(0, len(zs), self.batch_size):
            idx = order[lo : lo + self.batch_size]
            loss = torch.nn.functional.cross_entropy(self.clf(zs[idx]), xs[idx])
            self._opt.zero_grad(set_to_none=False)
            loss.backward()
            self._opt.step()

    def _capture(self) -> None:
        graph, reason = capture(self._epoch, "the classifier epoch")
        if reason is not None:
            self._fallback(reason)
            return
        self.graph = graph

    def _reset(self) -> None:
        """C_0's weights and a fresh Adam's state, in place (the graph's buffers stay put)."""
        with torch.no_grad():
            for name, p in self.clf.state_dict().items():
                p.copy_(self.c0_state[name])
            if self._opt is not None:
                for state in self._opt.state.values():
                    for v in state.values():
                        if torch.is_tensor(v):
                            v.zero_()

    def _fallback(self, reason: str) -> None:
        self.reason = reason
        self.graph = None
        warnings.warn(
            f"the obfuscator's classifier rounds run eagerly: {reason}.",
            GraphFallbackWarning,
            stacklevel=4,
        )

    def _eager(self, zn: Any, x: Any, tg: Any) -> None:
        self.clf.load_state_dict(self.c0_state)
        opt = torch.optim.Adam(self.clf.parameters(), lr=self.lr)
        self.clf.train()
        for _ in range(self.epochs):
            order = torch.randperm(len(zn), generator=tg, device=zn.device)
            for lo in range(0, len(zn), self.batch_size):
                idx = order[lo : lo + self.batch_size]
                loss = torch.nn.functional.cross_entropy(self.clf(zn[idx]), x[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.clf.eval()
