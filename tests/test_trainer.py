"""privwatch._trainer: the one training loop (steps, history, callbacks, early stopping)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from privwatch._trainer import Callback, EarlyStopping, History, Trainer


class LinearFit(Trainer):
    """Least squares y = 3 x + 1 by mini-batch SGD: a loop whose answer is known."""

    def __init__(self, epochs: int, callbacks: list[Any], seed: int = 0) -> None:
        gen = torch.Generator().manual_seed(seed)
        self.x = torch.linspace(-1, 1, 64)[:, None]
        self.y = 3 * self.x + 1
        self.net = torch.nn.Linear(1, 1)
        with torch.no_grad():
            self.net.weight.zero_()
            self.net.bias.zero_()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        super().__init__(
            None, epochs=epochs, callbacks=callbacks, n_samples=64, batch_size=16, generator=gen
        )

    def train_step(self, batch: Any) -> dict[str, Any]:
        loss = ((self.net(self.x[batch]) - self.y[batch]) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return {"loss": loss.detach()}

    def validation_step(self, epoch: int) -> dict[str, float]:
        with torch.no_grad():
            return {"val_loss": float(((self.net(self.x) - self.y) ** 2).mean())}


def test_trainer_converges_records_every_epoch_and_calls_callbacks_in_order() -> None:
    seen: list[tuple[str, int]] = []

    class Spy(Callback):
        def __init__(self, name: str) -> None:
            self.name = name

        def on_epoch_end(self, trainer: Trainer, record: dict[str, float]) -> bool | None:
            seen.append((self.name, int(record["epoch"])))
            return None

    trainer = LinearFit(40, [Spy("a"), lambda record, model: seen.append(("f", record["epoch"]))])
    history = trainer.run()
    assert isinstance(history, History) and len(history) == 40
    assert seen[:3] == [("a", 0), ("f", 0), ("a", 1)]
    w, b = float(trainer.net.weight.detach()), float(trainer.net.bias.detach())
    assert w == pytest.approx(3.0, abs=0.05) and b == pytest.approx(1.0, abs=0.05)
    losses = history.column("val_loss")
    assert losses[-1] < 1e-3 < losses[0]
    frame = history.to_frame()
    assert list(frame.columns) == ["epoch", "loss", "val_loss"] and len(frame) == 40


def test_early_stopping_keeps_the_best_accepted_epoch_and_stops() -> None:
    trainer = LinearFit(50, [])
    stopping = EarlyStopping(trainer.net, "val_loss", patience=3, accept=lambda r: r["epoch"] < 5)
    trainer.callbacks = [stopping]
    history = trainer.run()
    # the loss keeps falling, but only epochs 0-4 are acceptable: epoch 4 is kept, and training
    # stops after three more epochs without an accepted improvement
    assert stopping.best_epoch == 4 and len(history) == 8
    assert stopping.best == pytest.approx(history[4]["val_loss"])
    with torch.no_grad():
        kept = float(((trainer.net(trainer.x) - trainer.y) ** 2).mean())
    assert kept == pytest.approx(history[4]["val_loss"], rel=1e-6)
