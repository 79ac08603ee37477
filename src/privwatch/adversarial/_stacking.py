"""Pieces shared by the stacked fits of networks (continuous PPANs, obfuscators).

M modules of one architecture train as one program: their parameters and buffers are stacked
along a leading axis (:func:`torch.func.stack_module_state`) and every method runs on all of
them at once under :func:`torch.func.vmap`. Summing the M losses gives every member exactly
its own gradient, and Adam is elementwise, so one optimiser step on the stack is one step of
every member. Random draws never happen inside the stacked program: the noise is drawn outside
(on the CPU from each member's own generator, in the order its own fit draws it) and passed
in, which keeps the members equal to their own fits and the epoch capturable as a CUDA graph.

* :class:`Stack`: the stacked parameters of M modules, a vmapped call of any of their methods,
  and the copy of member k back into its own module;
* :class:`MemberView`: member k of a stack seen as a module by
  :class:`~privwatch._trainer.EarlyStopping` (its ``state_dict`` is the member's slice);
* :class:`MemberCallbacks`: one callback that hands each member its own record, history and
  callbacks, and stops the stacked run when every member has stopped;
* :func:`same_architecture`: whether modules can share one stack.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from .._torch import torch
from .._trainer import Callback, History

__all__ = ["MemberCallbacks", "MemberView", "Stack", "same_architecture"]


class _Method(torch.nn.Module):  # type: ignore[misc]
    """``forward`` calls the method ``name`` of ``inner`` (so that functional_call reaches
    any method of a module, not only its forward)."""

    def __init__(self, inner: Any, name: str) -> None:
        super().__init__()
        self.inner, self.name = inner, name

    def forward(self, *args: Any) -> Any:
        return getattr(self.inner, self.name)(*args)


def _plain_attributes(module: Any) -> dict[str, Any]:
    return {
        k: v
        for k, v in vars(module).items()
        if not k.startswith("_") and isinstance(v, (bool, int, float, str, tuple))
    }


def same_architecture(modules: Sequence[Any]) -> bool:
    """True when ``modules`` share type, layers (their repr), plain settings and the names and
    shapes of their parameters and buffers: one stack can run them all."""

    def key(m: Any) -> Any:
        shapes = [(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]
        return type(m), repr(m), sorted(_plain_attributes(m).items()), shapes

    first = key(modules[0])
    return all(key(m) == first for m in modules[1:])


class Stack:
    """The parameters and buffers of ``modules`` (one architecture, on one device) stacked
    along a leading axis of length M; :meth:`call` runs a method of every member on its own
    slice of the arguments."""

    def __init__(self, modules: Sequence[Any]) -> None:
        self.size = len(modules)
        params, buffers = torch.func.stack_module_state(list(modules))
        self.params: dict[str, Any] = params  # leaf tensors, (M, ...), requiring grad
        self.buffers: dict[str, Any] = buffers
        self._base = copy.deepcopy(modules[0]).to("meta")  # its own tensors are never used
        self._bound: dict[str, Any] = {}
        self._prefixed = (
            {f"inner.{k}": v for k, v in params.items()},
            {f"inner.{k}": v for k, v in buffers.items()},
        )

    def parameters(self) -> list[Any]:
        """The stacked parameters (for an optimiser)."""
        return list(self.params.values())

    def function(self, method: str) -> Callable[..., Any]:
        """``f(state, *args)``: ``method`` of one member whose parameters and buffers are
        ``state`` (to be vmapped over :attr:`state`)."""
        bound = self._bound.get(method)
        if bound is None:
            bound = self._bound[method] = _Method(self._base, method)

        def one(state: Any, *args: Any) -> Any:
            return torch.func.functional_call(bound, state, args)

        return one

    @property
    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(parameters, buffers) keyed for :meth:`function`."""
        return self._prefixed

    def call(self, method: str, *args: Any) -> Any:
        """``method`` of every member on its slice of ``args`` (each with a leading M axis)."""
        return torch.func.vmap(self.function(method))(self.state, *args)

    def member_state(self, k: int) -> dict[str, Any]:
        """Member ``k``'s parameters and buffers (copies), keyed as its module's state_dict."""
        with torch.no_grad():
            out = {name: t[k].detach().clone() for name, t in self.params.items()}
            out.update({name: t[k].detach().clone() for name, t in self.buffers.items()})
        return out

    def load_member(self, k: int, module: Any) -> None:
        """Copy member ``k`` of the stack into ``module`` (in place, on its device)."""
        module.load_state_dict(self.member_state(k), strict=False)

    def reset_to(self, states: Sequence[dict[str, Any]]) -> None:
        """Set every member's parameters to ``states[k]`` (in place: graphs keep their
        buffers)."""
        with torch.no_grad():
            for name, t in self.params.items():
                t.copy_(torch.stack([s[name] for s in states]))


class MemberView:
    """Member ``k`` of ``stack`` as :class:`~privwatch._trainer.EarlyStopping` sees a module:
    ``state_dict`` is the member's current slice, ``load_state_dict`` writes into ``module``
    (the member's own, unstacked module)."""

    def __init__(self, stack: Stack, k: int, module: Any) -> None:
        self.stack, self.k, self.module = stack, k, module

    def state_dict(self) -> dict[str, Any]:
        return self.stack.member_state(self.k)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.module.load_state_dict(state, strict=False)


class MemberCallbacks(Callback):
    """Per-member records for a stacked trainer: after each epoch, member k's record
    (``trainer.member_records[k]`` with ``"epoch"``) is appended to ``histories[k]`` and seen
    by its own ``callbacks[k]`` (whose ``trainer.model`` is ``models[k]``); a member whose
    callbacks stop it records no further epoch; the run stops when all have stopped."""

    def __init__(self, models: Sequence[Any], callbacks: Sequence[Sequence[Callback]]) -> None:
        self.callbacks = [list(c) for c in callbacks]
        self.histories = [History() for _ in models]
        self.views: list[Any] = [
            SimpleNamespace(model=m, history=h) for m, h in zip(models, self.histories, strict=True)
        ]
        self.active = [True] * len(models)

    def on_train_begin(self, trainer: Any) -> None:
        for view, cbs in zip(self.views, self.callbacks, strict=True):
            for cb in cbs:
                cb.on_train_begin(view)

    def on_epoch_end(self, trainer: Any, record: dict[str, float]) -> bool | None:
        for k, (view, cbs) in enumerate(zip(self.views, self.callbacks, strict=True)):
            if not self.active[k]:
                continue
            own = {"epoch": record["epoch"], **trainer.member_records[k]}
            self.histories[k].append(own)
            if any([bool(cb.on_epoch_end(view, own)) for cb in cbs]):
                self.active[k] = False
        return not any(self.active)

    def on_train_end(self, trainer: Any) -> None:
        for view, cbs in zip(self.views, self.callbacks, strict=True):
            for cb in cbs:
                cb.on_train_end(view)
