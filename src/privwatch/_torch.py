"""The torch foundation shared by the neural estimators and the adversarial mechanisms.

Importing this module is the one place that checks for PyTorch: it raises an ``ImportError``
naming the install command when torch is missing. Modules that need torch at import time
(``privwatch.adversarial``) import from here; the neural estimators import from here inside
``fit`` / ``load`` so that ``import privwatch.estimators`` stays light.

Nothing here touches torch's global random state: generators are local
(:func:`generator_from`), modules are built inside :func:`torch.random.fork_rng` and their
``Linear`` layers re-initialised from a local generator (:func:`build_seeded`), and
:func:`seeded_global_rng` is the one place where a seed is planted in torch's global generator —
inside ``fork_rng``, which restores the caller's state on exit (for dropout masks, which torch
draws from the global generator only).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

try:
    import torch as _torch_module
except ImportError as exc:  # pragma: no cover - torch is a dependency
    raise ImportError(
        "privwatch's neural estimators and adversarial mechanisms need PyTorch; install it with "
        "`pip install torch==2.13.0`."
    ) from exc

#: The torch module, typed loosely (``Any``) so that modules built on it type-check the way they
#: did when torch was imported lazily.
torch: Any = _torch_module

__all__ = [
    "ACTIVATIONS",
    "adam",
    "build_seeded",
    "cpu_threads",
    "fit_threads",
    "generator_from",
    "graph_adam",
    "mlp",
    "module_device",
    "reinit_linear",
    "seeded_global_rng",
    "torch",
]

ACTIVATIONS = ("relu", "tanh", "elu", "softplus")
#: Torch's intra-op threads at import (one per core by default): the most a fit uses.
_DEFAULT_THREADS = max(1, int(torch.get_num_threads()))


def generator_from(rng: np.random.Generator, device: Any = "cpu") -> Any:
    """A local ``torch.Generator`` on ``device`` seeded by one draw from the NumPy generator
    ``rng`` (same seed and device, same stream)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(int(rng.integers(0, 2**62)))
    return gen


@contextmanager
def seeded_global_rng(seed: int, device: Any) -> Iterator[None]:
    """Run the block with torch's global generator (and ``device``'s, on CUDA) seeded with
    ``seed``; the caller's global states are restored on exit, exception or not
    (:func:`torch.random.fork_rng`). Only for draws torch cannot take from a local generator
    (dropout masks)."""
    on_cuda = torch.device(device).type == "cuda"
    with torch.random.fork_rng(devices=[device] if on_cuda else []):
        torch.default_generator.manual_seed(seed)
        if on_cuda:
            torch.cuda.manual_seed(seed)
        yield


def fit_threads() -> int:
    """Torch (and BLAS) threads for one CPU fit: ``PRIVWATCH_THREADS`` when set, else the
    cores this process may use less those other processes keep busy right now (the runnable
    count of ``/proc/loadavg``, ourselves excluded), at least 1 and at most torch's default.

    Small networks train in many short steps; every step waits for its slowest thread, so a
    thread that shares a core with another busy process stalls the rest (issue #41 item 7: a
    COMPAS fit took 141 s beside one busy process on 2 cores, 22 s alone)."""
    env = os.environ.get("PRIVWATCH_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    busy = 0
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            busy = max(0, int(fh.read().split()[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        busy = 0
    return max(1, min(_DEFAULT_THREADS, cores - busy))


@contextmanager
def cpu_threads(device: Any = "cpu") -> Iterator[int]:
    """Run a fit with :func:`fit_threads` torch and BLAS threads on the CPU (torch's count is
    restored on exit); on another device, unchanged."""
    if device is not None and torch.device(device).type != "cpu":
        yield torch.get_num_threads()
        return
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # sklearn dep

    n, old = fit_threads(), torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(limits=n):
            yield n
    finally:
        torch.set_num_threads(old)


def adam(params: Any, lr: float, weight_decay: float = 0.0) -> Any:
    """Adam with the fused CPU kernel where torch has one for these tensors (the same update,
    about 15 % faster on the many tiny steps of adversarial training), the plain one otherwise."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):  # no fused kernel for these tensors
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)


def graph_adam(params: Any, lr: float, device: Any) -> Any:
    """Adam for ``device``: on CUDA with its state on the device (``capturable=True``) so that
    its ``step`` can be captured in a CUDA graph; on the CPU the fused kernel (:func:`adam`)."""
    if device.type != "cuda":
        return adam(params, lr)
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, capturable=True, fused=True)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - older torch
        return torch.optim.Adam(params, lr=lr, capturable=True, foreach=True)


def mlp(
    n_in: int, hidden: Sequence[int], n_out: int, dropout: float = 0.0, activation: str = "relu"
) -> Any:
    """A multilayer perceptron with the given activation (relu, tanh, elu or softplus)."""
    act = {
        "relu": torch.nn.ReLU,
        "tanh": torch.nn.Tanh,
        "elu": torch.nn.ELU,
        "softplus": torch.nn.Softplus,
    }[activation]
    layers: list[Any] = []
    width = n_in
    for h in hidden:
        layers += [torch.nn.Linear(width, int(h)), act()]
        if dropout > 0:
            layers.append(torch.nn.Dropout(dropout))
        width = int(h)
    layers.append(torch.nn.Linear(width, n_out))
    return torch.nn.Sequential(*layers)


def reinit_linear(module: Any, gen: Any) -> None:
    """Re-initialise every ``torch.nn.Linear`` of ``module`` (in ``modules()`` order) from the
    local generator ``gen`` with torch's default rule (Kaiming-uniform, a = sqrt(5); bias
    uniform on +-1/sqrt(fan_in)): the numbers a global seed before the build would give."""
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, torch.nn.Linear):
                torch.nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=gen)
                if layer.bias is not None:
                    bound = 1.0 / math.sqrt(layer.weight.shape[1]) if layer.weight.shape[1] else 0
                    layer.bias.uniform_(-bound, bound, generator=gen)


def build_seeded(build: Callable[[], Any], seed: int | None) -> Any:
    """``build()`` with torch's global RNG state left as it was; with ``seed`` the ``Linear``
    layers (of the module, or of each module of a returned tuple) are then initialised from a
    local generator seeded with it (reproducible)."""
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
    for t in (*module.parameters(), *module.buffers()):
        return t.device
    return torch.device("cpu")
