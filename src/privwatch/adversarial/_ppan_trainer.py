"""PPAN's training: the steps of :class:`~privwatch.adversarial.PPAN` in the one trainer."""

from __future__ import annotations

from typing import Any

from .._torch import adam, torch
from .._trainer import ProgressBar, StepSchedulers, Trainer

__all__ = ["PPANTrainer", "ppan_callbacks"]


def ppan_callbacks(ppan: Any, optimisers: list[Any], name: str = "PPAN") -> list[Any]:
    """The user's callbacks, then the cosine schedule (when asked for), then the progress bar:
    the order in which a PPAN's callbacks see each epoch."""
    out: list[Any] = list(ppan.callbacks)
    if ppan.schedule == "cosine":
        lr = torch.optim.lr_scheduler
        out.append(StepSchedulers([lr.CosineAnnealingLR(o, ppan.epochs) for o in optimisers]))
    if ppan.progress:
        out.append(ProgressBar(name, ppan.epochs, lambda r: f"{name} d={r['distortion']:.3f}"))
    return out


class PPANTrainer(Trainer):
    """Each mini-batch: ``adversary_steps`` times the adversary's (and discriminator's) ascent
    step, then the mechanism's descent step; the validation step is :meth:`PPAN.evaluate`."""

    def __init__(
        self, ppan: Any, data: tuple[Any, Any, Any], validation: tuple[Any, Any, Any] | None
    ) -> None:
        params = list(ppan.mechanism_.parameters())
        if isinstance(ppan.distortion_, torch.nn.Module):  # min over Q(useful | release), App. D
            params += list(ppan.distortion_.parameters())
        ppan._mech_opt = adam(params, ppan.lr)
        ppan._adv_opt = adam(ppan.adversary_.parameters(), ppan.adversary_lr or ppan.lr)
        optimisers = [ppan._mech_opt, ppan._adv_opt]
        if ppan.discriminator_ is not None:
            ppan._disc_opt = adam(ppan.discriminator_.parameters(), ppan.lr)
            optimisers.append(ppan._disc_opt)
        super().__init__(
            ppan,
            epochs=ppan.epochs,
            callbacks=ppan_callbacks(ppan, optimisers),
            n_samples=len(data[0]),
            batch_size=ppan.batch_size,
            generator=ppan._generator,
        )
        self.data, self.validation = data, validation

    def train_step(self, batch: Any) -> dict[str, Any]:
        ppan = self.model
        observed, sensitive, useful = (t[batch] for t in self.data)
        for _ in range(ppan.adversary_steps):
            ppan.adversary_step(observed, sensitive, useful)
            if ppan.discriminator_ is not None and ppan.gamma:
                ppan.discriminator_step(observed, useful)
        result: dict[str, Any] = ppan.mechanism_step(observed, sensitive, useful)
        return result

    def validation_step(self, epoch: int) -> dict[str, float]:
        if self.validation is None:
            return {}
        values = self.model.evaluate_tensors(*self.validation)
        return {f"val_{k}": v for k, v in values.items()}
