"""Shared machinery of the neural log-lift estimators: split, preprocessing, save / load."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from .._base import check_is_fitted
from .._device import resolve_device
from .._rng import RNGLike, check_rng
from .._validation import check_open_fraction, check_positive, check_positive_int
from ..exceptions import ValidationError
from ._base import FloatArray, LiftEstimator
from ._preprocess import TabularPreprocessor, as_frame
from ._torch_utils import ACTIVATIONS, TrainHistory, mlp, require_torch

__all__ = ["NeuralLift", "normalize_log_lift"]


class NeuralLift(LiftEstimator):
    """Base of the torch estimators: subclasses define ``_n_outputs``, ``_loss`` and
    ``_log_lift_from_outputs``."""

    def __init__(
        self,
        *,
        hidden: Sequence[int] = (64, 64),
        activation: str = "relu",
        dropout: float = 0.0,
        epochs: int = 200,
        batch_size: int = 256,
        lr: float = 1e-3,
        weight_decay: float = 1e-3,
        validation_fraction: float = 0.2,
        patience: int = 30,
        n_ensemble: int = 5,
        optimizer: str = "adam",
        progress: bool = False,
        device: str = "cpu",
        rng: RNGLike = None,
    ) -> None:
        self.hidden = hidden
        self.activation = activation
        self.dropout = dropout
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.n_ensemble = n_ensemble
        self.optimizer = optimizer
        self.progress = progress
        self.device = device
        self.rng = rng

    # ------------------------------------------------------------------ hooks
    def _loss(self, model: Any, x: Any, s: Any, *, generator: Any, evaluation: bool = False) -> Any:
        raise NotImplementedError

    def _member_log_lift(self, k: int, out: FloatArray) -> FloatArray:
        """Log-lift estimate of ensemble member ``k`` from its network outputs."""
        raise NotImplementedError

    def _after_fit(self, k: int, x_val: Any, s_val: Any) -> None:
        """Post-training step of member ``k`` on its validation split (calibration, diagnostics)."""

    # ------------------------------------------------------------------ fit / predict
    def _check(self) -> None:
        check_positive_int(self.epochs, "epochs")
        check_positive_int(self.batch_size, "batch_size")
        check_positive(self.lr, "lr")
        check_open_fraction(self.validation_fraction, "validation_fraction")
        if self.activation not in ACTIVATIONS:
            raise ValidationError(
                f"`activation` must be one of {ACTIVATIONS}; got {self.activation!r}."
            )
        if self.optimizer not in ("adam", "adagrad"):
            raise ValidationError(
                f"`optimizer` must be 'adam' or 'adagrad'; got {self.optimizer!r}."
            )
        check_positive_int(self.n_ensemble, "n_ensemble")
        if any(int(h) < 1 for h in self.hidden):
            raise ValidationError(f"`hidden` must be positive layer widths; got {self.hidden!r}.")

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> NeuralLift:
        """Train on ``X`` (records) and ``s`` (their sensitive labels) with a validation split."""
        torch = require_torch()
        from ._torch_utils import torch_generator, train

        self._check()
        dev = resolve_device(self.device)
        frame = as_frame(X)
        codes = self._fit_sensitive(s, len(frame))
        g = check_rng(self.rng)
        self.preprocessor_ = TabularPreprocessor().fit(frame)
        x_all = torch.as_tensor(self.preprocessor_.transform(frame), device=dev)
        s_all = torch.as_tensor(codes, device=dev)
        self._log_prior = torch.as_tensor(np.log(self.prior_), dtype=torch.float32, device=dev)
        n_val = max(1, round(self.validation_fraction * len(frame)))
        self.models_: list[Any] = []
        self.histories_: list[TrainHistory] = []
        self._init_members()
        for k in range(self.n_ensemble):  # each member has its own validation split
            order = torch.as_tensor(g.permutation(len(frame)), device=dev)
            val, tr = order[:n_val], order[n_val:]
            gen = torch_generator(g, dev)
            init_seed = int(g.integers(0, 2**62))
            # initialisation and dropout draw from torch's global generator: fork it so that
            # the caller's torch random state is left as it was
            with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
                torch.default_generator.manual_seed(init_seed)
                if dev.type == "cuda":
                    torch.cuda.manual_seed(init_seed)
                model = mlp(
                    x_all.shape[1], self.hidden, self._n_outputs(), self.dropout, self.activation
                ).to(dev)
                history = train(
                    model,
                    self._loss,
                    (x_all[tr], s_all[tr]),
                    (x_all[val], s_all[val]),
                    epochs=self.epochs,
                    batch_size=self.batch_size,
                    lr=self.lr,
                    weight_decay=self.weight_decay,
                    patience=self.patience,
                    generator=gen,
                    progress=self.progress,
                    description=f"{type(self).__name__} {k + 1}/{self.n_ensemble}",
                    optimizer=self.optimizer,
                )
            self.histories_.append(history)
            self.models_.append(model)
            self._after_fit(k, x_all[val], s_all[val])
        return self

    def _init_members(self) -> None:
        """Reset per-member state before training."""

    def _n_outputs(self) -> int:
        return len(self.sensitive_labels_)

    def _outputs(self, X: pd.DataFrame | ArrayLike) -> list[FloatArray]:
        """Network outputs of every ensemble member."""
        torch = require_torch()
        check_is_fitted(self, "models_")
        dev = next(self.models_[0].parameters()).device
        feats = torch.as_tensor(self.preprocessor_.transform(X), device=dev)
        with torch.no_grad():
            return [
                np.asarray(m(feats).double().cpu().numpy(), dtype=np.float64) for m in self.models_
            ]

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Estimated log-lift ``i(s, x)`` of each record (rows) and sensitive value (columns).

        With an ensemble, the members' estimates are averaged and renormalized so that
        ``sum_s P(s) exp(i(s, x)) = 1``.
        """
        outs = self._outputs(X)
        ll = np.mean([self._member_log_lift(k, o) for k, o in enumerate(outs)], axis=0)
        return normalize_log_lift(ll, self.prior_)

    # ------------------------------------------------------------------ persistence
    def _extra_state(self) -> dict[str, Any]:
        return {}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        return None

    def save(self, path: str | Path) -> None:
        """Write ``path`` (JSON: parameters, preprocessing, labels) and ``path`` + ``.safetensors``
        (weights). Loading never executes code."""
        check_is_fitted(self, "models_")
        from safetensors.torch import save_file

        params = self.get_params()
        params["hidden"] = list(params["hidden"])
        params["rng"] = None
        params["device"] = "cpu"
        state = {
            "kind": type(self).__name__,
            "params": params,
            "sensitive_labels": self.sensitive_labels_,
            "prior": self.prior_.tolist(),
            "preprocessor": self.preprocessor_.to_dict(),
            "n_features": self.preprocessor_.n_features_,
            "extra": self._extra_state(),
        }
        Path(path).write_text(json.dumps(state))
        tensors = {
            f"{k}.{name}": v.detach().cpu().contiguous()
            for k, m in enumerate(self.models_)
            for name, v in m.state_dict().items()
        }
        save_file(tensors, str(path) + ".safetensors")

    @classmethod
    def load(cls, path: str | Path) -> NeuralLift:
        torch = require_torch()
        from safetensors.torch import load_file

        state = json.loads(Path(path).read_text())
        if state.get("kind") != cls.__name__:
            raise ValidationError(
                f"`path` must hold a saved {cls.__name__}; got {state.get('kind')!r}."
            )
        est = cls(**state["params"])
        est.sensitive_labels_ = state["sensitive_labels"]
        est.prior_ = np.asarray(state["prior"])
        est.preprocessor_ = TabularPreprocessor.from_dict(state["preprocessor"])
        tensors = load_file(str(path) + ".safetensors")
        est.models_ = []
        for k in range(est.n_ensemble):
            model = mlp(
                state["n_features"], est.hidden, est._n_outputs(), est.dropout, est.activation
            )
            prefix = f"{k}."
            model.load_state_dict(
                {n[len(prefix) :]: t for n, t in tensors.items() if n.startswith(prefix)}
            )
            model.eval()
            est.models_.append(model)
        est._log_prior = torch.as_tensor(np.log(est.prior_), dtype=torch.float32)
        est._load_extra_state(state["extra"])
        return est


def normalize_log_lift(ll: FloatArray, prior: FloatArray) -> FloatArray:
    """Shift each row so that ``sum_s prior(s) exp(ll(s, x)) = 1``, as for every log-lift."""
    norm = logsumexp(ll + np.log(prior)[None, :], axis=1)
    return np.asarray(ll - norm[:, None], dtype=np.float64)
