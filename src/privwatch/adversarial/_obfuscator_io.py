"""Saving and loading a fitted :class:`~privwatch.adversarial.Obfuscator` through the checked
model format of :mod:`privwatch._serialization` (JSON + checksummed arrays; no pickle)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .._memory import check_allocation
from .._serialization import check_array, read_model, reconstructing, write_model
from .._torch import torch
from .._trainer import History
from ._generators import make_generator

__all__ = ["load_obfuscator", "save_obfuscator"]


def save_obfuscator(est: Any, path: str | Path) -> None:
    """Write the parameters, users, normalisation, history and generator weights of ``est``."""
    params = est.get_params()
    params["generator_hidden"] = list(params["generator_hidden"])
    params["classifier_hidden"] = list(params["classifier_hidden"])
    params["rng"] = None
    params["callbacks"] = []
    state = {
        "params": params,
        "users": est.users_.tolist(),
        "centre": list(map(float, est._centre)),
        "scale": est._scale,
        "budget": est.budget_,
        "best_epoch": est.best_epoch_,
        "val_accuracy": est.val_accuracy_,
        "history": list(est.history_),
    }
    arrays = {
        k: v.detach().cpu().contiguous().numpy() for k, v in est.generator_.state_dict().items()
    }
    write_model(path, type(est).__name__, state, arrays)


def load_obfuscator(cls: Any, path: str | Path) -> Any:
    """Rebuild an obfuscator of class ``cls`` from ``path``; every size is checked against the
    stored weights (or the memory budget) before anything is built."""
    state, arrays = read_model(path, cls.__name__)
    stored = sum(int(a.size) for a in arrays.values())
    with reconstructing(path):
        params = dict(state["params"])
        params["generator_hidden"] = tuple(params["generator_hidden"])
        params["classifier_hidden"] = tuple(params["classifier_hidden"])
        est = cls(**params)
        widths = [*est.generator_hidden, est.noise_dim]
        if not all(isinstance(w, int) and 0 < w <= max(stored, 1) for w in widths):
            raise ValueError(f"generator sizes {widths} do not match {stored} stored weights")
        check_allocation("anchor_grid", (int(est.anchor_grid), int(est.anchor_grid), 2))
        est.users_ = np.asarray(state["users"])
        est._centre = np.asarray(state["centre"], dtype=np.float64)
        est._scale = float(state["scale"])
        if est._centre.shape != (2,) or not (
            np.isfinite(est._centre).all() and math.isfinite(est._scale) and est._scale > 0
        ):
            raise ValueError("centre and scale must be finite (scale positive)")
        est.budget_ = float(state.get("budget", est.budget))  # older files: the given budget
        if not (math.isfinite(est.budget_) and est.budget_ > 0):
            raise ValueError("the budget must be finite and positive")
        est.best_epoch_ = int(state["best_epoch"])
        est.val_accuracy_ = float(state["val_accuracy"])
        est.history_ = History(
            {str(k): float(v) for k, v in dict(r).items()} for r in state["history"]
        )
        est.n_iter_ = len(est.history_)
        for name, arr in arrays.items():
            check_array(path, arrays, name, ndim=arr.ndim)
        gen = make_generator(
            est.generator,
            tuple(est.generator_hidden),
            noise_dim=est.noise_dim,
            anchor_grid=est.anchor_grid,
        )
        try:
            gen.load_state_dict({k: torch.from_numpy(v) for k, v in arrays.items()})
        except RuntimeError as exc:  # missing, unexpected or mis-shaped weights
            raise ValueError(str(exc)[:200]) from None
    gen.eval()
    est.generator_ = gen
    return est
