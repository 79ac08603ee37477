"""The ensemble members of neural log-lift estimators trained side by side as one program.

The members of one ``fit`` (an ensemble), of every fold of a cross-fit (``fit_score``: the
full fit and ``cv x n_repeats`` fold estimators) or of a streamed cross-fit are networks of one
shape and one setting that differ only in their data, their validation split and their seeds.
:class:`StackedLiftTrainer` stacks their weights (:class:`~._stacked_net.StackedMLP`) and runs
one mini-batch step of all of them at once: the batch of member ``k`` is its own next
mini-batch, padded to ``batch_size`` with masked rows; each member's loss is computed over its
own rows only and the losses are summed, so each gets exactly its own gradient; the optimiser
(:class:`~._stacked_net.StackedOptimizer`) moves only the members that had a batch. A member
whose epoch is shorter (a fold with fewer records) waits; one that has stopped early (its own
patience on its own validation loss) stays as it is and keeps its best epoch's weights.

On the CPU each member keeps its own ``torch.Generator`` (its batch order, its product
shuffles) and its own dropout generator, so each member equals its own fit
(:func:`~._neural_training.fit_members`, one network after another) up to float rounding.
On CUDA the batch orders of all members come from one device generator (the first member's)
and, from the second epoch on, a whole epoch — every step and the validation — is one
captured CUDA graph replayed per epoch (in-memory fits without dropout); otherwise an
in-memory fit runs eagerly with a :class:`~privwatch._cuda_graph.GraphFallbackWarning` saying
why (a streamed fit, whose mini-batches come from the host, always runs eagerly).

Imported only when a neural estimator is fitted (it imports torch).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

from .._cuda_graph import GraphFallbackWarning, graphed_epoch
from .._torch import torch
from .._trainer import Callback, History, ProgressBar, Trainer
from ._stacked_net import StackedMLP, StackedOptimizer

__all__ = ["MemberPlan", "StackedLiftTrainer", "train_stacked"]

NEG = -1e30  # a masked entry of a log-sum-exp: exp(NEG - m) is 0 for any finite m
VALIDATION_ROWS = 65_536  # validation records per member evaluated at once


@dataclass
class MemberPlan:
    """One ensemble member before training: the estimator it belongs to and its index there,
    its network (initial weights), its batch generator, its dropout generator (None without
    dropout), its training data (row indices into its group's features, or a
    :class:`~._stream_training.TrainingStream`), its validation pair, and its group (the
    estimator's features in an in-memory stack; None when streamed)."""

    estimator: Any
    index: int
    model: Any
    generator: Any
    dropout_generator: Any
    train: Any
    validation: tuple[Any, Any]
    group: int | None


def _padded(tensors: list[Any], length: int, width: int | None = None) -> Any:
    """Stack 1-D tensors (or 2-D ones, ``width`` columns at most) of different lengths into
    one tensor of ``length`` rows (and ``width`` columns), zero-padded."""
    first = tensors[0]
    shape = (len(tensors), length) if first.dim() == 1 else (len(tensors), length, width)
    out = torch.zeros(shape, dtype=first.dtype, device=first.device)
    for k, t in enumerate(tensors):
        if t.dim() == 1:
            out[k, : len(t)] = t
        else:
            out[k, : len(t), : t.shape[1]] = t
    return out


def _graph_reason(first: Any, dev: Any, streamed: bool) -> str | None:
    """Why this stacked fit cannot run as a CUDA graph (None: it can)."""
    if dev.type != "cuda":
        return "not on CUDA"
    if streamed:
        return "streamed mini-batches come from the host"
    if first.dropout > 0:
        return "dropout masks are drawn member by member"
    if first.epochs < 2:
        return "a single epoch leaves nothing to replay"
    return None


class StackedStopping(Callback):
    """Early stopping of every member on its own validation loss (patience, min_delta 1e-6,
    as :class:`~privwatch._trainer.EarlyStopping`); the best weights of each are kept in
    :attr:`best` and the members that stop leave ``trainer.active``."""

    def __init__(self, trainer: StackedLiftTrainer, patience: int, min_delta: float = 1e-6):
        n, dev = trainer.n_members, trainer.dev
        self.patience, self.min_delta = patience, min_delta
        self.best_loss = torch.full((n,), math.inf, dtype=torch.float64, device=dev)
        self.best_epoch = torch.full((n,), -1, dtype=torch.int64, device=dev)
        self.stale = torch.zeros(n, dtype=torch.int64, device=dev)
        self.best = [p.detach().clone() for p in trainer.net.parameters]

    def on_epoch_end(self, trainer: Trainer, record: dict[str, float]) -> bool | None:
        assert isinstance(trainer, StackedLiftTrainer)
        active, epoch = trainer.active, int(record["epoch"])
        loss = trainer.val_loss.double()
        better = active & (loss < self.best_loss - self.min_delta)
        self.best_loss = torch.where(better, loss, self.best_loss)
        self.best_epoch = torch.where(better, epoch, self.best_epoch)
        self.stale = torch.where(better, 0, self.stale + active.long())
        for kept, p in zip(self.best, trainer.net.parameters, strict=True):
            kept.copy_(torch.where(better.view((-1,) + (1,) * (p.dim() - 1)), p.detach(), kept))
        trainer.last_epoch = torch.where(active, epoch, trainer.last_epoch)
        active &= self.stale < self.patience
        trainer.active_host = active.tolist()
        return not any(trainer.active_host)


class StackedLiftTrainer(Trainer):
    """The stacked fit of ``plans`` (see the module docstring); ``groups`` are the in-memory
    estimators' (features, codes) tensors, None for streamed members."""

    def __init__(self, plans: list[MemberPlan], groups: list[tuple[Any, Any]] | None, dev: Any):
        first = self.first = plans[0].estimator
        self.plans, self.dev, self.n_members = plans, dev, len(plans)
        self.on_cuda, self.streamed = dev.type == "cuda", groups is None
        self.kind, self.product = first._stacked_loss()
        x_val = [p.validation[0] for p in plans]
        width = max(int(t.shape[1]) for t in x_val)
        if groups is not None:
            width = max(width, *(int(f.shape[1]) for f, _ in groups))
        self.net = StackedMLP(
            [p.model for p in plans],
            width,
            first.activation,
            first.dropout,
            dev,
            [p.dropout_generator for p in plans] if first.dropout > 0 else None,
        )
        self.opt = StackedOptimizer(
            self.net.parameters, first.optimizer, first.lr, first.weight_decay
        )
        priors = [torch.as_tensor(p.estimator.prior_, dtype=torch.float32) for p in plans]
        self.log_prior = torch.stack(priors).log().to(dev)
        self.val_x = _padded(x_val, max(len(t) for t in x_val), width)
        self.val_s = _padded([p.validation[1] for p in plans], self.val_x.shape[1])
        self.val_n = torch.tensor([len(p.validation[1]) for p in plans], device=dev)
        self.val_valid = (
            torch.arange(self.val_x.shape[1], device=dev)[None, :] < self.val_n[:, None]
        )
        self.val_loss = torch.zeros(self.n_members, device=dev)
        self.active = torch.ones(self.n_members, dtype=torch.bool, device=dev)
        self.active_host = [True] * self.n_members
        self.last_epoch = torch.full((self.n_members,), -1, dtype=torch.int64, device=dev)
        self.hist = torch.zeros(first.epochs, 2, self.n_members, dtype=torch.float64, device=dev)
        self.sums = torch.zeros(self.n_members, dtype=torch.float64, device=dev)
        self.seen = torch.zeros(self.n_members, dtype=torch.float64, device=dev)
        self.batch = int(first.batch_size)
        if groups is not None:
            self._in_memory(groups, width)
        self.graph: Any = None
        self.reason = _graph_reason(first, dev, self.streamed)
        self.stopping = StackedStopping(self, int(first.patience))
        callbacks: list[Any] = [self.stopping]
        if any(p.estimator.progress for p in plans):
            what = f"{type(first).__name__}: {self.n_members} networks stacked"
            callbacks.append(ProgressBar(what, first.epochs, lambda r: what))
        super().__init__(first, epochs=first.epochs, callbacks=callbacks)

    # ------------------------------------------------------------------ data
    def _in_memory(self, groups: list[tuple[Any, Any]], width: int) -> None:
        """The groups' features and codes padded into one tensor each, the members' training
        rows, and the static shape of an epoch: ``n_steps`` mini-batches of ``batch``."""
        self.features = _padded([f for f, _ in groups], max(len(f) for f, _ in groups), width)
        self.codes = _padded([c for _, c in groups], self.features.shape[1])
        self.group = torch.tensor([p.group for p in self.plans], device=self.dev)
        self.n_train = [len(p.train) for p in self.plans]
        self.n_steps = max(-(-n // self.batch) for n in self.n_train)
        length = self.n_steps * self.batch
        self.train_rows = _padded([p.train for p in self.plans], length)
        spots = torch.arange(length, device=self.dev)
        self.valid = spots[None, :] < torch.tensor(self.n_train, device=self.dev)[:, None]
        self.counts = self.valid.view(self.n_members, self.n_steps, self.batch).sum(2)
        self.counts_host: list[list[int]] = self.counts.tolist()
        self.rows = self.train_rows.clone()
        self.shuffle = torch.zeros_like(self.train_rows)
        self.seen.copy_(torch.tensor(self.n_train, dtype=torch.float64))

    def _schedule(self) -> None:
        """This epoch's batch orders (and product shuffles) of the members still training:
        member by member from its own generator on the CPU, in the order its own fit draws
        them; on CUDA from one device generator."""
        shuffles = self.kind != "ce" and self.product == "shuffle"
        if self.on_cuda:
            gen, shape = self.plans[0].generator, self.rows.shape
            keys = torch.rand(shape, generator=gen, device=self.dev).masked_fill_(~self.valid, 2)
            self.rows.copy_(self.train_rows.gather(1, keys.argsort(1)))
            if shuffles:
                keys = torch.rand(shape, generator=gen, device=self.dev).masked_fill_(
                    ~self.valid, 2
                )
                cut = keys.view(shape[0], self.n_steps, self.batch).argsort(2)
                self.shuffle.copy_(cut.view(shape))
            return
        for k, plan in enumerate(self.plans):
            if not self.active_host[k]:
                continue
            n, gen = self.n_train[k], plan.generator
            self.rows[k, :n] = plan.train[torch.randperm(n, generator=gen)]
            if shuffles:  # the batches' product shuffles, after the order (as the loss draws)
                for j, size in enumerate(self.counts_host[k]):
                    if size:
                        lo = j * self.batch
                        self.shuffle[k, lo : lo + size] = torch.randperm(size, generator=gen)

    # ------------------------------------------------------------------ losses
    def member_losses(
        self, out: Any, codes: Any, valid: Any, count: Any, shuffle: Any = None
    ) -> Any:
        """Each member's loss (M,) on its rows of a stacked batch: the mean cross-entropy, or
        minus the DV / NWJ bound with the product of marginals from ``shuffle`` (positions
        within the batch) or, when None, from the prior (the evaluation form)."""
        n = count.clamp(min=1).to(out.dtype)
        picked = out.gather(2, codes[..., None]).squeeze(2)
        if self.kind == "ce":
            log_norm = out.logsumexp(2)
            return ((log_norm - picked) * valid).sum(1) / n
        joint = (picked * valid).sum(1) / n
        if shuffle is None:
            terms = (out + self.log_prior[:, None, :]).masked_fill(~valid[..., None], NEG)
            log_mean = terms.flatten(1).logsumexp(1) - n.log()
        else:
            mixed = out.gather(2, codes.gather(1, shuffle)[..., None]).squeeze(2)
            log_mean = mixed.masked_fill(~valid, NEG).logsumexp(1) - n.log()
        return -(joint - log_mean if self.kind == "dv" else joint - torch.exp(log_mean - 1.0))

    def _step(self, x: Any, codes: Any, valid: Any, count: Any, shuffle: Any, sizes: Any) -> None:
        out = self.net(x, sizes)
        losses = self.member_losses(out, codes, valid, count, shuffle)
        self.opt.zero_grad()
        losses.sum().backward()
        self.opt.step(count > 0)
        self.sums.add_(losses.detach().double() * count)

    # ------------------------------------------------------------------ epochs
    def epoch_body(self) -> None:
        """Every mini-batch step of an in-memory epoch, then the validation; static shapes."""
        self.sums.zero_()
        shuffles = self.kind != "ce" and self.product == "shuffle"
        dropout = self.first.dropout > 0
        for j in range(self.n_steps):
            cut = slice(j * self.batch, (j + 1) * self.batch)
            rows, valid = self.rows[:, cut], self.valid[:, cut] & self.active[:, None]
            count = self.counts[:, j] * self.active
            sizes = None
            if dropout:
                sizes = [c[j] * a for c, a in zip(self.counts_host, self.active_host, strict=True)]
            x = self.features[self.group[:, None], rows]
            codes = self.codes[self.group[:, None], rows]
            self._step(x, codes, valid, count, self.shuffle[:, cut] if shuffles else None, sizes)
        self.validate()

    def _streamed_epoch(self) -> None:
        """One epoch of streamed members: each step takes the next mini-batch of every member
        still reading (its own stream, its own generator), until every stream is done."""
        self.sums.zero_()
        self.seen.zero_()
        shuffles = self.kind != "ce" and self.product == "shuffle"
        width = self.val_x.shape[2]
        streams = {
            k: p.train.epoch(p.generator) for k, p in enumerate(self.plans) if self.active_host[k]
        }
        while streams:
            got = {k: b for k, it in list(streams.items()) if (b := next(it, None)) is not None}
            for k in set(streams) - set(got):
                del streams[k]
            if not got:
                break
            x = torch.zeros((self.n_members, self.batch, width), device=self.dev)
            codes = torch.zeros((self.n_members, self.batch), dtype=torch.int64, device=self.dev)
            shuffle = torch.zeros_like(codes)
            sizes = [0] * self.n_members
            for k, (xk, sk) in got.items():
                sizes[k] = n = len(sk)
                x[k, :n, : xk.shape[1]], codes[k, :n] = xk, sk
                if shuffles:
                    gen = self.plans[k].generator
                    shuffle[k, :n] = torch.randperm(n, generator=gen, device=gen.device)
            count = torch.tensor(sizes, dtype=torch.float32, device=self.dev)
            valid = torch.arange(self.batch, device=self.dev)[None, :] < count[:, None]
            self._step(x, codes, valid, count, shuffle if shuffles else None, sizes)
            self.seen.add_(count.double())
        self.validate()

    def validate(self) -> None:
        """Each member's loss on its validation records (the evaluation form), in slices."""
        with torch.no_grad():
            self._validate()

    def _validate(self) -> None:
        total = torch.zeros(self.n_members, device=self.dev)
        log_sum = torch.full((self.n_members,), NEG, device=self.dev)
        n = self.val_n.clamp(min=1).float()
        for lo in range(0, self.val_x.shape[1], VALIDATION_ROWS):
            cut = slice(lo, lo + VALIDATION_ROWS)
            out = self.net(self.val_x[:, cut])
            valid, codes = self.val_valid[:, cut], self.val_s[:, cut]
            picked = out.gather(2, codes[..., None]).squeeze(2)
            if self.kind == "ce":
                total += ((out.logsumexp(2) - picked) * valid).sum(1)
                continue
            total += (picked * valid).sum(1)
            terms = (out + self.log_prior[:, None, :]).masked_fill(~valid[..., None], NEG)
            log_sum = torch.logaddexp(log_sum, terms.flatten(1).logsumexp(1))
        if self.kind == "ce":
            self.val_loss.copy_(total / n)
            return
        joint, log_mean = total / n, log_sum - n.log()
        bound = joint - log_mean if self.kind == "dv" else joint - torch.exp(log_mean - 1.0)
        self.val_loss.copy_(-bound)

    def train_epoch(self, epoch: int) -> dict[str, float]:
        if self.streamed:
            self._streamed_epoch()
        else:
            self._schedule()
            graphed_epoch(self, epoch, "the stacked lift epoch")
        self.hist[epoch, 0].copy_(self.sums / self.seen.clamp(min=1))
        self.hist[epoch, 1].copy_(self.val_loss)
        return {}

    def unstack(self) -> list[tuple[History, int]]:
        """Load each member's best weights into its network; (history, best epoch) each."""
        self.net.load_into([p.model for p in self.plans], self.stopping.best)
        hist = self.hist.cpu().numpy()
        last, best = self.last_epoch.tolist(), self.stopping.best_epoch.tolist()
        results = []
        for k, plan in enumerate(self.plans):
            plan.model.eval()
            history = History(
                {"epoch": e, "train_loss": float(hist[e, 0, k]), "val_loss": float(hist[e, 1, k])}
                for e in range(last[k] + 1)
            )
            results.append((history, int(best[k])))
        return results


def train_stacked(
    plans: list[MemberPlan], groups: list[tuple[Any, Any]] | None, dev: Any
) -> list[tuple[History, int]]:
    """Train ``plans`` as one stacked program; returns each member's (history, best epoch),
    its network holding its best epoch's weights (see the module docstring)."""
    trainer = StackedLiftTrainer(plans, groups, dev)
    trainer.run()
    if trainer.on_cuda and trainer.graph is None and not trainer.streamed:
        warnings.warn(
            f"the stacked {type(trainer.first).__name__} fit ran eagerly on {dev}: "
            f"{trainer.reason}.",
            GraphFallbackWarning,
            stacklevel=3,
        )
    return trainer.unstack()
