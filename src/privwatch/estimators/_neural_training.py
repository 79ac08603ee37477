"""Training of one ensemble member of the neural log-lift estimators in privwatch's one trainer.

Imported only when a neural estimator is fitted, so that ``import privwatch.estimators`` does
not import torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._rng import check_rng
from .._torch import generator_from, mlp, seeded_global_rng, torch
from .._trainer import EarlyStopping, History, ProgressBar, Trainer

if TYPE_CHECKING:
    from ._stacked_lift import MemberPlan

__all__ = [
    "LiftTrainer",
    "MemberDraw",
    "finish_members",
    "fit_members",
    "plan_members",
    "train_member",
]

#: ``draw(g)``: one member's training data and its validation pair, drawn from ``g``
MemberDraw = Callable[[np.random.Generator], tuple[Any, tuple[Any, Any]]]


class LiftTrainer(Trainer):
    """Mini-batches of (features, sensitive codes) through ``loss_fn``; the validation step is
    the loss on the member's validation split (``evaluation=True``). ``train`` is the pair of
    training tensors (indexed by :meth:`Trainer.batches`); a subclass that streams its
    mini-batches (:class:`~privwatch.estimators._stream_training.StreamLiftTrainer`) passes
    its stream instead and overrides :meth:`train_epoch`."""

    def __init__(
        self,
        model: Any,
        network: Any,
        loss_fn: Callable[..., Any],
        train: Any,
        validation: tuple[Any, Any],
        *,
        optimizer: Any,
        epochs: int,
        batch_size: int,
        generator: Any,
        callbacks: list[Any],
    ) -> None:
        super().__init__(
            model,
            epochs=epochs,
            callbacks=callbacks,
            n_samples=int(train[0].shape[0]) if isinstance(train, tuple) else 0,
            batch_size=batch_size,
            generator=generator,
        )
        self.network, self.loss_fn, self.optimizer = network, loss_fn, optimizer
        self.train, self.validation = train, validation

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.network.train()
        return super().train_epoch(epoch)

    def train_step(self, batch: Any) -> dict[str, Any]:
        features, sensitive = (t[batch] for t in self.train)
        return self.step(features, sensitive)

    def step(self, features: Any, sensitive: Any) -> dict[str, Any]:
        """One optimiser step on a mini-batch of features and sensitive codes."""
        loss = self.loss_fn(self.network, features, sensitive, generator=self.generator)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"train_loss": float(loss.detach())}

    def validation_step(self, epoch: int) -> dict[str, float]:
        self.network.eval()
        with torch.no_grad():
            loss = self.loss_fn(
                self.network, *self.validation, generator=self.generator, evaluation=True
            )
        return {"val_loss": float(loss)}


def train_member(
    est: Any,
    network: Any,
    train: Any,
    validation: tuple[Any, Any],
    *,
    generator: Any,
    description: str,
    trainer_cls: type[LiftTrainer] = LiftTrainer,
) -> tuple[Any, int]:
    """Train ``network`` with ``est``'s settings (Adam or Adagrad with weight decay; early
    stopping on the validation loss, keeping the best epoch's weights). ``train`` is a pair of
    tensors (features, sensitive codes) for :class:`LiftTrainer`, or what ``trainer_cls``
    reads (a stream of mini-batches for the streamed fit). Returns (history, best epoch)."""
    opt_cls = {"adam": torch.optim.Adam, "adagrad": torch.optim.Adagrad}[est.optimizer]
    optimizer = opt_cls(network.parameters(), lr=est.lr, weight_decay=est.weight_decay)
    stopping = EarlyStopping(network, "val_loss", patience=est.patience, min_delta=1e-6)
    callbacks: list[Any] = [stopping]
    if est.progress:
        callbacks.append(
            ProgressBar(description, est.epochs, lambda r: f"{description} val={r['val_loss']:.4f}")
        )
    trainer = trainer_cls(
        est,
        network,
        est._loss,
        train,
        validation,
        optimizer=optimizer,
        epochs=est.epochs,
        batch_size=est.batch_size,
        generator=generator,
        callbacks=callbacks,
    )
    history = trainer.run()
    network.eval()
    return history, stopping.best_epoch


def fit_members(
    est: Any,
    n_in: int,
    draw: MemberDraw,
    dev: Any,
    suffix: str = "",
    trainer_cls: type[LiftTrainer] = LiftTrainer,
) -> None:
    """Train the ``n_ensemble`` members of the neural estimator ``est`` (its prior, labels and
    preprocessing already fitted), each on the data ``draw`` gives it with its own validation
    split. Every draw comes from ``est.rng``, member by member: its data, then
    its batch generator, then the seed of its initial weights (drawn by torch's global
    generator inside :func:`privwatch._torch.seeded_global_rng`)."""
    g = check_rng(est.rng)
    est._start_members(dev)
    for k in range(est.n_ensemble):
        train, (x_val, s_val) = draw(g)
        est.validation_sizes_.append(len(s_val))
        gen = generator_from(g, dev)
        with seeded_global_rng(int(g.integers(0, 2**62)), dev):
            model = mlp(n_in, est.hidden, est._n_outputs(), est.dropout, est.activation).to(dev)
            history, best = train_member(
                est,
                model,
                train,
                (x_val, s_val),
                generator=gen,
                description=f"{type(est).__name__} {k + 1}/{est.n_ensemble}{suffix}",
                trainer_cls=trainer_cls,
            )
        est.histories_.append(history)
        est.best_epochs_.append(best)
        est.models_.append(model)
        est._after_fit(k, x_val, s_val)


def _global_state_generator(dev: Any) -> Any:
    """A local generator in the state of torch's global one on ``dev`` (the generator its
    dropout masks would come from next)."""
    gen = torch.Generator(device=dev)
    gen.set_state(torch.cuda.get_rng_state(dev) if dev.type == "cuda" else torch.get_rng_state())
    return gen


def plan_members(
    est: Any, n_in: int, draw: MemberDraw, dev: Any, group: int | None = None
) -> list[MemberPlan]:
    """The ``n_ensemble`` members of ``est`` ready to train in a stack
    (:mod:`~privwatch.estimators._stacked_lift`): the draws of :func:`fit_members`, in its
    order (each member's data, batch generator and weight seed), and its network with those
    initial weights; with dropout, a generator where the member's dropout masks would start.
    ``group`` is the index of ``est``'s features in an in-memory stack."""
    from ._stacked_lift import MemberPlan

    g = check_rng(est.rng)
    est._start_members(dev)
    plans: list[MemberPlan] = []
    for k in range(est.n_ensemble):
        train, validation = draw(g)
        est.validation_sizes_.append(len(validation[1]))
        gen = generator_from(g, dev)
        with seeded_global_rng(int(g.integers(0, 2**62)), dev):
            model = mlp(n_in, est.hidden, est._n_outputs(), est.dropout, est.activation).to(dev)
            dropout_gen = _global_state_generator(dev) if est.dropout > 0 else None
        plans.append(MemberPlan(est, k, model, gen, dropout_gen, train, validation, group))
    return plans


def finish_members(plans: list[MemberPlan], results: list[tuple[History, int]]) -> None:
    """Give each estimator its trained members (in member order) with their histories and
    best epochs, and run its post-training step (calibration, diagnostics) on each."""
    for plan, (history, best) in zip(plans, results, strict=True):
        est = plan.estimator
        est.histories_.append(history)
        est.best_epochs_.append(best)
        est.models_.append(plan.model)
        est._after_fit(plan.index, *plan.validation)
