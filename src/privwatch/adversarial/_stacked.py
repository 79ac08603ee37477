"""Finite-alphabet PPANs of one curve trained side by side as one stacked model.

The points of a privacy-utility curve are PPANs of identical shapes and settings that differ in
delta, data and seed. Stacking their parameters along a leading axis and summing their
objectives gives every model exactly its own gradient, and Adam is elementwise, so one optimiser
step on the stack is one step of every model — the same arithmetic as fitting them one by one,
with the per-step overhead of torch paid once per curve instead of once per point.

On CUDA the stack lives on the device (data moved once), the batch orders of all models come
from one device generator (one launch per epoch), Adam keeps its state on the device, and from
the second epoch on a whole epoch is one captured CUDA graph replayed once per epoch (the first
epoch runs eagerly and warms the graph up). Histories stay on the device until the end.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._device import resolve_device
from .._rng import check_rng
from ..estimators._torch_utils import require_torch
from ._families import (
    CategoricalAdversary,
    FactoredMechanism,
    MatrixMechanism,
    factored_logits,
)
from ._runtime import GraphFallbackWarning, device_generator, graph_adam

__all__ = ["can_stack", "fit_stacked"]

_SHARED = (
    "epochs",
    "batch_size",
    "adversary_steps",
    "lr",
    "adversary_lr",
    "schedule",
    "penalty",
    "lam",
    "device",
    "cuda_graph",
)


def _mech_params(mech: Any) -> list[Any]:
    if isinstance(mech, FactoredMechanism):
        return [*mech.factors, mech.interaction]
    return [mech.logits]


def can_stack(models: Sequence[Any], triples: Sequence[Any]) -> bool:
    """True when ``models`` are unfitted-shape-compatible finite PPANs that one stacked run can
    fit: matrix or factored mechanisms of one shape, the paper's matrix adversary, no
    discriminator or callbacks, the same settings but delta, and data of one length."""
    from ._ppan import PPAN

    first = models[0]
    if len(models) < 2 or not all(type(m) is PPAN for m in models):
        return False
    if not all(type(m.mechanism) in (MatrixMechanism, FactoredMechanism) for m in models):
        return False
    kinds = {(type(m.mechanism), tuple(p.shape for p in _mech_params(m.mechanism))) for m in models}
    if len(kinds) != 1:
        return False
    for m in models:
        adv = m.adversary
        net: Any = getattr(adv, "net", None)
        linear = net is not None and isinstance(net, require_torch().nn.Linear)
        if not (type(adv) is CategoricalAdversary and linear and net.bias is None):
            return False
        if m.discriminator is not None or m.callbacks or m.progress:
            return False
        if any(getattr(m, k) != getattr(first, k) for k in _SHARED):
            return False
        if net.weight.shape != first.adversary.net.weight.shape:
            return False
    lengths = {len(np.asarray(t[0])) for t in triples}
    return len(lengths) == 1


def _graph_reason(first: Any, dev: Any) -> str | None:
    """Why this stacked fit cannot run as a CUDA graph (None: it can)."""
    if dev.type != "cuda":
        return "not on CUDA"
    if not first.cuda_graph:
        return "cuda_graph=False"
    if first.schedule != "constant":
        return f"schedule={first.schedule!r} changes the step size between epochs"
    if first.epochs < 2:
        return "a single epoch leaves nothing to replay"
    return None


def fit_stacked(models: Sequence[Any], triples: Sequence[Any]) -> list[Any]:
    """Fit ``models`` (see :func:`can_stack`) in one stacked run; returns them fitted, each with
    its own history, exactly as their own ``fit`` would up to float rounding (on the CPU, where
    each keeps its own batch order; on CUDA the orders come from one device generator seeded
    from the first model's ``rng``)."""
    torch = require_torch()
    first = models[0]
    for m in models:
        m._validate()
    dev = resolve_device(first.device)
    on_cuda = dev.type == "cuda"
    if on_cuda:  # one generator for the batch orders of the whole stack
        stack_gen = device_generator(check_rng(first.rng), dev)
        gens = [device_generator(check_rng(m.rng), dev) for m in models]
    else:  # batch orders as PPAN.fit, one generator per model
        gens = [device_generator(check_rng(m.rng)) for m in models]
    data = [m._tensors(*t) for m, t in zip(models, triples, strict=True)]
    w, x, y = (torch.stack([d[i] for d in data]).to(dev) for i in range(3))
    n_models, n = w.shape
    mech_params = [
        torch.nn.Parameter(torch.stack([p.detach() for p in ps]).to(dev))
        for ps in zip(*(_mech_params(m.mechanism) for m in models), strict=True)
    ]
    adv_w = torch.nn.Parameter(
        torch.stack([m.adversary.net.weight.detach() for m in models]).to(dev)
    )
    delta = torch.tensor([float(m.delta) for m in models], device=dev)
    mech_opt = graph_adam(mech_params, first.lr, dev)
    adv_opt = graph_adam([adv_w], first.adversary_lr or first.lr, dev)
    scheds = (
        [torch.optim.lr_scheduler.CosineAnnealingLR(o, first.epochs) for o in (mech_opt, adv_opt)]
        if first.schedule == "cosine"
        else []
    )
    factored = isinstance(first.mechanism, FactoredMechanism)
    codes: Any = first.mechanism.codes.to(dev) if factored else None
    distortion = first.distortion

    def rows(wb: Any) -> Any:  # (M, b, n_z) release probabilities
        logits = mech_params[-1]
        if factored:
            logits = factored_logits(mech_params[:-1], logits, codes)
        return torch.softmax(logits.gather(1, wb[..., None].expand(-1, -1, logits.shape[2])), 2)

    def log_q(z: Any, xb: Any) -> Any:  # (M, b): E_z log Q(x | z), eq. (6)
        log_post = torch.log_softmax(adv_w.transpose(1, 2), dim=2)  # (M, n_z, n_x)
        picked = log_post.gather(2, xb[:, None, :].expand(-1, log_post.shape[1], -1))
        return (z * picked.transpose(1, 2)).sum(dim=2)

    order = torch.empty((n_models, n), dtype=torch.int64, device=dev)
    sums = torch.zeros(2, n_models, device=dev)
    hist = torch.zeros(first.epochs, 2, n_models, device=dev)

    def epoch_body() -> None:  # one pass over the batches of ``order``; static shapes
        sums.zero_()
        for lo in range(0, n, first.batch_size):
            idx = order[:, lo : lo + first.batch_size]
            wb, xb, yb = w.gather(1, idx), x.gather(1, idx), y.gather(1, idx)
            for _ in range(first.adversary_steps):
                with torch.no_grad():
                    z = rows(wb)
                loss = -log_q(z, xb).mean(dim=1).sum()
                adv_opt.zero_grad(set_to_none=not on_cuda)
                loss.backward()
                adv_opt.step()
            z = rows(wb)
            priv = log_q(z, xb)
            dist = distortion(yb.reshape(-1), z.reshape(-1, z.shape[2])).reshape(yb.shape)
            loss = (priv.mean(dim=1) + first.penalty_term(dist, delta)).sum()
            mech_opt.zero_grad(set_to_none=not on_cuda)
            loss.backward()
            mech_opt.step()
            with torch.no_grad():
                sums.add_(torch.stack([priv.mean(dim=1), dist.mean(dim=1)]) * idx.shape[1])

    reason = _graph_reason(first, dev)
    graph: Any = None
    for epoch in range(first.epochs):
        if on_cuda:
            order.copy_(torch.rand((n_models, n), generator=stack_gen, device=dev).argsort(1))
        else:
            order.copy_(torch.stack([torch.randperm(n, generator=g) for g in gens]))
        if reason is None and epoch == 1:
            graph, reason = _capture(epoch_body)
        if graph is not None:
            graph.replay()
        elif reason is None:  # the eager warm-up epoch, on a side stream as CUDA graphs need
            side = torch.cuda.Stream(device=dev)
            side.wait_stream(torch.cuda.current_stream(dev))
            with torch.cuda.stream(side):
                epoch_body()
            torch.cuda.current_stream(dev).wait_stream(side)
        else:
            epoch_body()
        hist[epoch].copy_(sums)
        for sched in scheds:
            sched.step()
    if on_cuda and first.cuda_graph and graph is None:
        warnings.warn(
            f"the stacked PPAN fit ran eagerly on {dev}: {reason}.",
            GraphFallbackWarning,
            stacklevel=3,
        )
    _unstack(models, mech_params, adv_w, (hist.cpu().double() / n).numpy(), gens, dev)
    for m in models:
        m.cuda_graph_ = graph is not None
    return list(models)


def _capture(epoch_body: Any) -> tuple[Any, str | None]:
    """Capture one epoch as a CUDA graph: (graph, None), or (None, why it failed)."""
    torch = require_torch()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            epoch_body()
    except RuntimeError as exc:  # e.g. an operation that cannot be captured
        return None, f"capturing the epoch failed ({str(exc).splitlines()[0]})"
    return graph, None


def _unstack(
    models: Sequence[Any], mech_params: Any, adv_w: Any, hist: Any, gens: Any, dev: Any
) -> None:
    """Copy the stacked weights back into each model (on ``dev``) with its own history."""
    torch = require_torch()
    with torch.no_grad():
        for k, m in enumerate(models):
            m.mechanism.to(dev)
            m.adversary.to(dev)
            for p, stacked in zip(_mech_params(m.mechanism), mech_params, strict=True):
                p.copy_(stacked[k])
            m.adversary.net.weight.copy_(adv_w[k])
            m.history_ = [
                {
                    "epoch": float(e),
                    "log_q": float(hist[e, 0, k]),
                    "distortion": float(hist[e, 1, k]),
                }
                for e in range(hist.shape[0])
            ]
            m._gen = gens[k]
            m.mechanism.eval()
            m.adversary.eval()
            m.fitted_ = True
