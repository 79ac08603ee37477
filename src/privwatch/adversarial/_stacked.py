"""Finite-alphabet PPANs of one curve trained side by side as one stacked model.

The points of a privacy-utility curve are PPANs of identical shapes and settings that differ in
delta, data and seed. Stacking their parameters along a leading axis and summing their
objectives gives every model exactly its own gradient, and Adam is elementwise, so one optimiser
step on the stack is one step of every model — the same arithmetic as fitting them one by one,
with the per-step overhead of torch paid once per curve instead of once per point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._rng import check_rng
from ..estimators._torch_utils import adam, require_torch, torch_generator
from ._families import (
    CategoricalAdversary,
    FactoredMechanism,
    MatrixMechanism,
    factored_logits,
)

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


def fit_stacked(models: Sequence[Any], triples: Sequence[Any]) -> list[Any]:
    """Fit ``models`` (see :func:`can_stack`) in one stacked run; returns them fitted, each with
    its own history, exactly as their own ``fit`` would up to float rounding."""
    torch = require_torch()
    first = models[0]
    for m in models:
        m._validate()
    gens = [torch_generator(check_rng(m.rng)) for m in models]  # batch orders, as PPAN.fit
    data = [m._tensors(*t) for m, t in zip(models, triples, strict=True)]
    w, x, y = (torch.stack([d[i] for d in data]) for i in range(3))
    n_models, n = w.shape
    mech_params = [
        torch.nn.Parameter(torch.stack([p.detach() for p in ps]))
        for ps in zip(*(_mech_params(m.mechanism) for m in models), strict=True)
    ]
    adv_w = torch.nn.Parameter(torch.stack([m.adversary.net.weight.detach() for m in models]))
    delta = torch.tensor([float(m.delta) for m in models])
    mech_opt = adam(mech_params, first.lr)
    adv_opt = adam([adv_w], first.adversary_lr or first.lr)
    scheds = (
        [torch.optim.lr_scheduler.CosineAnnealingLR(o, first.epochs) for o in (mech_opt, adv_opt)]
        if first.schedule == "cosine"
        else []
    )
    factored = isinstance(first.mechanism, FactoredMechanism)
    codes: Any = first.mechanism.codes if factored else None
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

    histories: list[list[dict[str, float]]] = [[] for _ in models]
    for epoch in range(first.epochs):
        order = torch.stack([torch.randperm(n, generator=g) for g in gens])
        sums = torch.zeros(2, n_models)
        for lo in range(0, n, first.batch_size):
            idx = order[:, lo : lo + first.batch_size]
            wb, xb, yb = w.gather(1, idx), x.gather(1, idx), y.gather(1, idx)
            for _ in range(first.adversary_steps):
                with torch.no_grad():
                    z = rows(wb)
                loss = -log_q(z, xb).mean(dim=1).sum()
                adv_opt.zero_grad()
                loss.backward()
                adv_opt.step()
            z = rows(wb)
            priv = log_q(z, xb)
            dist = distortion(yb.reshape(-1), z.reshape(-1, z.shape[2])).reshape(yb.shape)
            loss = (priv.mean(dim=1) + first.penalty_term(dist, delta)).sum()
            mech_opt.zero_grad()
            loss.backward()
            mech_opt.step()
            with torch.no_grad():
                sums += torch.stack([priv.mean(dim=1), dist.mean(dim=1)]) * idx.shape[1]
        for k, hist in enumerate(histories):
            hist.append(
                {
                    "epoch": float(epoch),
                    "log_q": float(sums[0, k]) / n,
                    "distortion": float(sums[1, k]) / n,
                }
            )
        for sched in scheds:
            sched.step()
    with torch.no_grad():
        for k, m in enumerate(models):
            for p, stacked in zip(_mech_params(m.mechanism), mech_params, strict=True):
                p.copy_(stacked[k])
            m.adversary.net.weight.copy_(adv_w[k])
            m.history_ = histories[k]
            m._gen = gens[k]
            m.mechanism.eval()
            m.adversary.eval()
            m.fitted_ = True
    return list(models)
