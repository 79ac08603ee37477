"""One training loop for every torch model of privwatch, built from small overridable steps.

The pattern is skorch's: a :class:`Trainer` runs epochs; each epoch is :meth:`Trainer.train_epoch`
(by default: the mini-batches of :meth:`Trainer.batches`, each through :meth:`Trainer.train_step`,
whose outputs are averaged weighted by batch size) followed by :meth:`Trainer.validation_step`;
the two dicts, with ``"epoch"``, form the epoch's record, appended to a :class:`History`; then
every :class:`Callback` sees it (early stopping, progress bar, step-size schedules, the user's
own). PPAN (:mod:`privwatch.adversarial`), its stacked fit, the location obfuscator and the
neural lift estimators all train through it, each overriding only the steps that differ.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ._torch import torch

__all__ = [
    "Callback",
    "EarlyStopping",
    "FunctionCallback",
    "History",
    "ProgressBar",
    "StepSchedulers",
    "Trainer",
    "as_callbacks",
]


class History(list[dict[str, float]]):
    """One record (a dict of floats, with ``"epoch"``) per epoch; ``to_frame()`` for a table.

    >>> h = History([{"epoch": 0, "loss": 1.0}, {"epoch": 1, "loss": 0.5}])
    >>> h.column("loss")
    [1.0, 0.5]
    """

    def column(self, key: str) -> list[float]:
        """The values of ``key`` over the epochs."""
        return [record[key] for record in self]

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per epoch."""
        import pandas as pd

        return pd.DataFrame(list(self))


class Callback:
    """Hooks called by :meth:`Trainer.run`; ``on_epoch_end`` returning True stops training."""

    def on_train_begin(self, trainer: Trainer) -> None:
        """Before the first epoch."""

    def on_epoch_end(self, trainer: Trainer, record: dict[str, float]) -> bool | None:
        """After each epoch's record is in ``trainer.history``; True stops the training."""
        return None

    def on_train_end(self, trainer: Trainer) -> None:
        """After the last epoch (also after an early stop)."""


class FunctionCallback(Callback):
    """A plain function ``fn(record, model)`` called after every epoch (``model`` is the
    estimator being fitted)."""

    def __init__(self, fn: Callable[[dict[str, float], Any], Any]) -> None:
        self.fn = fn

    def on_epoch_end(self, trainer: Trainer, record: dict[str, float]) -> bool | None:
        self.fn(record, trainer.model)
        return None


def as_callbacks(callbacks: Iterable[Any]) -> list[Callback]:
    """:class:`Callback` objects as they are; plain functions wrapped in
    :class:`FunctionCallback`."""
    return [c if isinstance(c, Callback) else FunctionCallback(c) for c in callbacks]


class EarlyStopping(Callback):
    """Keep the weights of ``module`` at the best epoch by ``monitor`` and stop after
    ``patience`` epochs without an improvement of more than ``min_delta``.

    ``mode="min"``: lower is better. ``accept(record)``, when given, must hold for an epoch to
    count as best (e.g. a distortion budget). The best weights are restored at the end;
    ``best_epoch`` and ``best`` say which and what they scored (``best_epoch`` is -1 when no
    epoch was accepted: the initial weights are kept).
    """

    def __init__(
        self,
        module: Any,
        monitor: str,
        *,
        patience: int,
        min_delta: float = 0.0,
        accept: Callable[[dict[str, float]], bool] | None = None,
        initial: float = float("inf"),
    ) -> None:
        self.module, self.monitor = module, monitor
        self.patience, self.min_delta, self.accept = patience, min_delta, accept
        self.best = initial
        self.best_epoch = -1
        self.best_state = copy.deepcopy(module.state_dict())
        self._stale = 0

    def on_epoch_end(self, trainer: Trainer, record: dict[str, float]) -> bool | None:
        value = record[self.monitor]
        if value < self.best - self.min_delta and (self.accept is None or self.accept(record)):
            self.best, self.best_epoch, self._stale = value, int(record["epoch"]), 0
            self.best_state = copy.deepcopy(self.module.state_dict())
        else:
            self._stale += 1
        return self._stale >= self.patience

    def on_train_end(self, trainer: Trainer) -> None:
        self.module.load_state_dict(self.best_state)


class StepSchedulers(Callback):
    """Step torch learning-rate schedulers once per epoch (after the other callbacks)."""

    def __init__(self, schedulers: Sequence[Any]) -> None:
        self.schedulers = list(schedulers)

    def on_epoch_end(self, trainer: Trainer, record: dict[str, float]) -> bool | None:
        for sched in self.schedulers:
            sched.step()
        return None


class ProgressBar(Callback):
    """A transient rich progress bar over the epochs; ``describe(record)`` is its label."""

    def __init__(
        self, description: str, total: int, describe: Callable[[dict[str, float]], str]
    ) -> None:
        self.description, self.total, self.describe = description, total, describe
        self._bar: Any = None

    def on_train_begin(self, trainer: Trainer) -> None:
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.start()
        self._task = self._bar.add_task(self.description, total=self.total)

    def on_epoch_end(self, trainer: Trainer, record: dict[str, float]) -> bool | None:
        self._bar.update(self._task, advance=1, description=self.describe(record))
        return None

    def on_train_end(self, trainer: Trainer) -> None:
        self._bar.stop()


class Trainer:
    """The loop: ``epochs`` times :meth:`train_epoch` then :meth:`validation_step`, one record
    per epoch in :attr:`history`, then the callbacks (any returning True stops).

    Subclasses override the steps: :meth:`batches` (default: a random permutation of
    ``n_samples`` from ``generator`` cut into ``batch_size`` slices), :meth:`train_step`
    (required unless :meth:`train_epoch` is overridden), :meth:`validation_step` (default: no
    validation). ``model`` is the estimator being fitted, handed to function callbacks.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        epochs: int,
        callbacks: Iterable[Any] = (),
        n_samples: int = 0,
        batch_size: int = 1,
        generator: Any = None,
    ) -> None:
        self.model = model
        self.epochs = epochs
        self.callbacks = as_callbacks(callbacks)
        self.n_samples, self.batch_size, self.generator = n_samples, batch_size, generator
        self.history = History()

    # ------------------------------------------------------------------ steps
    def batches(self, epoch: int) -> Iterator[Any]:
        """Index tensors of the epoch's mini-batches."""
        device = self.generator.device if self.generator is not None else "cpu"
        order = torch.randperm(self.n_samples, generator=self.generator, device=device)
        for lo in range(0, self.n_samples, self.batch_size):
            yield order[lo : lo + self.batch_size]

    def train_step(self, batch: Any) -> dict[str, Any]:
        """One optimisation step on ``batch``; returns the values to average over the epoch
        (floats or 0-d tensors, averaged weighted by the batch's length)."""
        raise NotImplementedError

    def train_epoch(self, epoch: int) -> dict[str, float]:
        """One pass of :meth:`train_step` over :meth:`batches`; the weighted means."""
        sums: dict[str, Any] = {}
        seen = 0
        for batch in self.batches(epoch):
            size = len(batch)
            for key, value in self.train_step(batch).items():
                sums[key] = sums.get(key, 0.0) + value * size
            seen += size
        return {key: float(total) / max(seen, 1) for key, total in sums.items()}

    def validation_step(self, epoch: int) -> dict[str, float]:
        """Held-out measurements of the epoch (none by default)."""
        return {}

    # ------------------------------------------------------------------ loop
    def run(self) -> History:
        """Train; returns :attr:`history`."""
        for cb in self.callbacks:
            cb.on_train_begin(self)
        try:
            for epoch in range(self.epochs):
                record: dict[str, float] = {"epoch": epoch}
                record.update(self.train_epoch(epoch))
                record.update(self.validation_step(epoch))
                self.history.append(record)
                stops = [bool(cb.on_epoch_end(self, record)) for cb in self.callbacks]
                if any(stops):
                    break
        finally:
            for cb in self.callbacks:
                cb.on_train_end(self)
        return self.history
