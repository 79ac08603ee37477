"""Device, seeding and CUDA-graph helpers shared by the adversarial trainers.

* Modules are built and initialised without touching torch's global generator: the build runs
  inside :func:`torch.random.fork_rng` (the caller's state is restored afterwards) and every
  ``Linear`` layer is then re-initialised, in module order, from a local ``torch.Generator`` with
  torch's own default rule (Kaiming-uniform weights, uniform bias) — the same numbers a
  ``torch.manual_seed(seed)`` before the build would give, without the global side effect.
* :func:`graph_adam` is Adam whose state lives on the device (``capturable=True``), so a CUDA
  graph that contains ``step()`` can be replayed.
* :class:`GraphFallbackWarning` says why a fit on CUDA ran eagerly instead of as a graph.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..estimators._torch_utils import adam, require_torch

__all__ = [
    "GraphFallbackWarning",
    "build_seeded",
    "device_generator",
    "graph_adam",
    "module_device",
    "reinit_linear",
]


class GraphFallbackWarning(UserWarning):
    """A fit asked to run as a CUDA graph ran eagerly; the message says why."""


def device_generator(rng: np.random.Generator, device: Any = "cpu") -> Any:
    """A local ``torch.Generator`` on ``device`` seeded from the NumPy generator ``rng`` (one
    draw; same seed and device, same stream)."""
    torch = require_torch()
    gen = torch.Generator(device=device)
    gen.manual_seed(int(rng.integers(0, 2**62)))
    return gen


def reinit_linear(module: Any, gen: Any) -> None:
    """Re-initialise every ``torch.nn.Linear`` of ``module`` (in ``modules()`` order) from the
    local generator ``gen`` with torch's default rule (Kaiming-uniform, a = sqrt(5); bias
    uniform on +-1/sqrt(fan_in))."""
    torch = require_torch()
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, torch.nn.Linear):
                torch.nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=gen)
                if layer.bias is not None:
                    bound = 1.0 / math.sqrt(layer.weight.shape[1]) if layer.weight.shape[1] else 0
                    layer.bias.uniform_(-bound, bound, generator=gen)


def build_seeded(build: Callable[[], Any], seed: int | None) -> Any:
    """``build()`` with torch's global RNG state left as it was; with ``seed`` the ``Linear``
    layers are then initialised from a local generator seeded with it (reproducible)."""
    torch = require_torch()
    with torch.random.fork_rng(devices=[]):
        module = build()
    if seed is not None:
        gen = torch.Generator()
        gen.manual_seed(int(seed))
        for part in module if isinstance(module, tuple) else (module,):
            reinit_linear(part, gen)
    return module


def module_device(module: Any) -> Any:
    """The device of ``module``'s first parameter or buffer (CPU when it has none)."""
    torch = require_torch()
    for t in (*module.parameters(), *module.buffers()):
        return t.device
    return torch.device("cpu")


def graph_adam(params: Any, lr: float, device: Any) -> Any:
    """Adam for ``device``: on CUDA with its state on the device (``capturable=True``) so that
    its ``step`` can be captured in a CUDA graph; on the CPU the fused kernel (:func:`adam`)."""
    torch = require_torch()
    if device.type != "cuda":
        return adam(params, lr)
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, capturable=True, fused=True)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - older torch
        return torch.optim.Adam(params, lr=lr, capturable=True, foreach=True)
