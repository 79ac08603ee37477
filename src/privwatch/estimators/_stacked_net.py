"""M multilayer perceptrons of one architecture as stacked weights, and their optimisers.

:class:`StackedMLP` holds the ``Linear`` layers of M networks built by
:func:`privwatch._torch.mlp` as tensors with a leading member axis and runs them on a stacked
batch ``(M, b, n_in)`` with batched matrix products (``baddbmm``): one kernel per layer for all
members instead of M. A member whose inputs are narrower (a fold whose one-hot encoding has
fewer columns) gets zero columns in its first weight, which its zero-padded inputs never move.

:class:`StackedOptimizer` is Adam or Adagrad (with L2 weight decay, as ``torch.optim`` applies
it) on those tensors, with a per-member step count and an ``active`` mask: a member that has no
mini-batch at this step (its epoch is shorter) or has stopped early is left exactly as it is,
moments included — the arithmetic of its own ``torch.optim`` optimiser, step by step.

Imported only when a neural estimator is fitted (it imports torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._torch import torch

__all__ = ["StackedMLP", "StackedOptimizer"]

BETA1, BETA2 = 0.9, 0.999  # torch.optim.Adam's defaults

_ACTIVATIONS = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "elu": torch.nn.functional.elu,
    "softplus": torch.nn.functional.softplus,
}


def _linears(model: Any) -> list[Any]:
    return [m for m in model if isinstance(m, torch.nn.Linear)]


class StackedMLP:
    """The ``Linear`` layers of ``models`` (built by :func:`privwatch._torch.mlp` with one
    ``hidden``, ``activation`` and ``dropout``; first layers padded to ``n_in`` columns),
    stacked on ``device``. ``dropout_generators[k]`` draws member ``k``'s dropout masks (a
    generator in the state torch's global one had after the member's weights were drawn, so
    the masks are those of its own fit); None without dropout."""

    def __init__(
        self,
        models: Sequence[Any],
        n_in: int,
        activation: str,
        dropout: float,
        device: Any,
        dropout_generators: Sequence[Any] | None = None,
    ) -> None:
        layers = [_linears(m) for m in models]
        self.n_in = [int(ls[0].weight.shape[1]) for ls in layers]
        self.weights: list[Any] = []
        self.biases: list[Any] = []
        with torch.no_grad():
            for i in range(len(layers[0])):
                ws = [ls[i].weight.detach() for ls in layers]
                if i == 0:
                    ws = [torch.nn.functional.pad(w, (0, n_in - w.shape[1])) for w in ws]
                self.weights.append(torch.nn.Parameter(torch.stack(ws).to(device)))
                self.biases.append(
                    torch.nn.Parameter(
                        torch.stack([ls[i].bias.detach() for ls in layers]).to(device)
                    )
                )
        self.act = _ACTIVATIONS[activation]
        self.dropout = float(dropout)
        self.dropout_generators = list(dropout_generators or [])

    @property
    def parameters(self) -> list[Any]:
        """The stacked tensors, layer by layer (weight, bias)."""
        return [p for pair in zip(self.weights, self.biases, strict=True) for p in pair]

    def __call__(self, x: Any, sizes: Any = None) -> Any:
        """Outputs ``(M, b, n_out)`` of the stacked inputs ``x`` ``(M, b, n_in)``; with
        ``sizes`` (the members' batch lengths, host integers; training mode) dropout masks
        are drawn for each member's first ``sizes[k]`` rows."""
        h = x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.baddbmm(b[:, None, :], h, w.transpose(1, 2))
            if i < last:
                h = self.act(h)
                if sizes is not None and self.dropout > 0:
                    h = h * self._mask(h, sizes)
        return h

    def _mask(self, h: Any, sizes: Sequence[int]) -> Any:
        """Inverted-dropout masks, member by member from its own generator (the draws of
        ``torch.nn.functional.dropout`` on a batch of its size)."""
        keep = 1.0 - self.dropout
        mask = torch.zeros_like(h)
        for k, (n, gen) in enumerate(zip(sizes, self.dropout_generators, strict=True)):
            if n:
                draw = torch.empty((n, h.shape[2]), device=h.device, dtype=h.dtype)
                mask[k, :n] = draw.bernoulli_(keep, generator=gen).div_(keep)
        return mask

    def load_into(self, models: Sequence[Any], weights: Sequence[Any]) -> None:
        """Copy the stacked ``weights`` (as :attr:`parameters`) back into ``models``."""
        with torch.no_grad():
            for k, model in enumerate(models):
                for i, layer in enumerate(_linears(model)):
                    w, b = weights[2 * i][k], weights[2 * i + 1][k]
                    layer.weight.copy_(w[:, : self.n_in[k]] if i == 0 else w)
                    layer.bias.copy_(b)


class StackedOptimizer:
    """Adam (``kind="adam"``, torch's defaults: betas 0.9 / 0.999, eps 1e-8) or Adagrad
    (``"adagrad"``: eps 1e-10, no learning-rate decay) on stacked ``params`` whose first axis
    is the member; :meth:`step` moves only the ``active`` members."""

    def __init__(self, params: Sequence[Any], kind: str, lr: float, weight_decay: float) -> None:
        self.params, self.kind = list(params), kind
        self.lr, self.weight_decay = float(lr), float(weight_decay)
        n_members = self.params[0].shape[0]
        dev = self.params[0].device
        self.steps = torch.zeros(n_members, dtype=torch.float64, device=dev)
        self.first = [torch.zeros_like(p) for p in self.params]
        self.second = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self) -> None:
        """Clear the gradients (set to zero in place: a captured graph keeps its buffers)."""
        for p in self.params:
            if p.grad is not None:
                p.grad.zero_()

    def _scales(self) -> tuple[Any, Any]:
        """Per-member step size and the square root of the second moment's bias correction."""
        t = self.steps.clamp(min=1.0)
        if self.kind == "adagrad":
            return torch.full_like(t, self.lr), torch.ones_like(t)
        return self.lr / (1.0 - BETA1**t), torch.sqrt(1.0 - BETA2**t)

    def step(self, active: Any) -> None:
        """One update of the members where ``active`` (a bool tensor of M) holds."""
        with torch.no_grad():
            self._update(active)

    def _update(self, active: Any) -> None:
        """In place; an inactive member's step size and moment weights are 0 (its weights and
        moments stay exactly as they are)."""
        on = active.to(self.steps.dtype)
        self.steps.add_(on)
        size, correction = self._scales()
        size = size * on
        for p, m1, m2 in zip(self.params, self.first, self.second, strict=True):
            shape = (-1,) + (1,) * (p.dim() - 1)
            on_p, size_p = on.to(p.dtype).view(shape), size.to(p.dtype).view(shape)
            grad = p.grad if self.weight_decay == 0 else p.grad.add(p, alpha=self.weight_decay)
            if self.kind == "adagrad":
                m2.addcmul_(grad * on_p, grad)
                p.addcdiv_(grad * -size_p, m2.sqrt().add_(1e-10))
                continue
            m1.lerp_(grad, (1 - BETA1) * on_p)
            m2.mul_(1 - (1 - BETA2) * on_p).addcmul_(grad * ((1 - BETA2) * on_p), grad)
            denom = (m2.sqrt() / correction.to(p.dtype).view(shape)).add_(1e-8)
            p.addcdiv_(m1 * -size_p, denom)
