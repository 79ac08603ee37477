"""Donsker-Varadhan (and NWJ) neural log-lift estimators (Hsu, Asoodeh, Calmon eq. 12-13)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import logsumexp

from .._base import check_is_fitted
from .._rng import RNGLike
from ..exceptions import ValidationError
from ._lift import FloatArray, normalize_log_lift
from ._neural import NeuralLift

__all__ = ["DVLift"]


class DVLift(NeuralLift):
    r"""Log-lift as the maximiser of a variational bound on I(S;X).

    ``objective="dv"`` (Donsker-Varadhan, Hsu et al. eq. 12-13):

    .. math:: \max_g\ \mathbb{E}_{P_{S,X}}[g(S,X)] - \log \mathbb{E}_{P_S P_X}[e^{g(S,X)}]

    whose maximisers are :math:`g^* = i + c` for any constant c. ``objective="nwj"`` (the
    f-divergence form of footnote 2, Nguyen-Wainwright-Jordan):
    :math:`\max_g \mathbb{E}_P[g] - e^{-1}\mathbb{E}_{P_S P_X}[e^{g}]`, maximised by
    :math:`g^* = 1 + i` with no free constant.

    The network maps x to one output per sensitive value, g(s, x). Products of marginals are
    formed by shuffling the sensitive labels within each batch (``product="shuffle"``, as in the
    paper) or by averaging over the known sensitive prior (``product="exact"``, lower variance).
    The estimate is normalized per record, :math:`\hat i(s,x) = g(s,x) - \log\sum_{s'} \hat P(s')
    e^{g(s',x)}`, so that :math:`\sum_s \hat P(s) e^{\hat i(s,x)} = 1` as for every true log-lift;
    ``normalization_error_`` (nats, on the validation split) measures how far the raw network
    output was from satisfying it: the spread (standard deviation) of the per-record log
    normalizer for DV, whose constant is free, and its root mean square for NWJ.
    """

    # every parameter is named (no **kwargs): scikit-learn's get_params/clone read the signature
    def __init__(
        self,
        *,
        objective: str = "dv",
        product: str = "shuffle",
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
        super().__init__(
            hidden=hidden,
            activation=activation,
            dropout=dropout,
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            weight_decay=weight_decay,
            validation_fraction=validation_fraction,
            patience=patience,
            n_ensemble=n_ensemble,
            optimizer=optimizer,
            progress=progress,
            device=device,
            rng=rng,
        )
        self.objective = objective
        self.product = product

    def _check(self) -> None:
        super()._check()
        if self.objective not in ("dv", "nwj"):
            raise ValidationError(f"`objective` must be 'dv' or 'nwj'; got {self.objective!r}.")
        if self.product not in ("shuffle", "exact"):
            raise ValidationError(f"`product` must be 'shuffle' or 'exact'; got {self.product!r}.")

    def _loss(self, model: Any, x: Any, s: Any, *, generator: Any, evaluation: bool = False) -> Any:
        from .._torch import torch

        g = model(x)
        joint = g.gather(1, s[:, None]).mean()
        n = g.shape[0]
        if self.product == "exact" or evaluation:
            # E_{P_S P_X} e^g = mean_i sum_s P(s) e^{g(s, x_i)}
            log_terms = g + self._log_prior[None, :]
            log_mean = torch.logsumexp(log_terms.reshape(-1), 0) - math.log(n)
        else:
            perm = torch.randperm(n, generator=generator, device=generator.device)
            shuffled = g.gather(1, s[perm][:, None]).reshape(-1)
            log_mean = torch.logsumexp(shuffled, 0) - math.log(n)
        bound = joint - log_mean if self.objective == "dv" else joint - torch.exp(log_mean - 1.0)
        return -bound

    def _stacked_loss(self) -> tuple[str, str | None]:
        return self.objective, self.product

    def _raw(self, out: FloatArray) -> FloatArray:
        return out if self.objective == "dv" else out - 1.0

    def _member_log_lift(self, k: int, out: FloatArray) -> FloatArray:
        return normalize_log_lift(self._raw(out), self.prior_)

    def _init_members(self) -> None:
        self.normalization_errors_: list[float] = []

    def _after_fit(self, k: int, x_val: Any, s_val: Any) -> None:
        from .._torch import torch

        with torch.no_grad():
            raw = self._raw(self.models_[k](x_val).double().cpu().numpy())
        norm = logsumexp(raw + np.log(self.prior_)[None, :], axis=1)
        if self.objective == "dv":
            self.normalization_errors_.append(float(np.std(norm)))
        else:
            self.normalization_errors_.append(float(np.sqrt(np.mean(norm**2))))

    @property
    def normalization_error_(self) -> float:
        """Largest normalization error over the ensemble members (see the class docstring)."""
        check_is_fitted(self, "normalization_errors_")
        return float(max(self.normalization_errors_))

    def bound(self, X: Any, s: Any) -> float:
        """The variational lower bound on I(S;X) evaluated on (X, s) with the trained network."""
        check_is_fitted(self, "models_")
        raw = self._raw(np.mean(self._outputs(X), axis=0))
        codes = self._sensitive_codes(s)
        joint = float(raw[np.arange(len(codes)), codes].mean())
        log_mean = float(logsumexp(raw + np.log(self.prior_)[None, :]) - math.log(len(codes)))
        if self.objective == "dv":
            return joint - log_mean
        return joint - math.exp(log_mean)

    def _extra_state(self) -> dict[str, Any]:
        return {"normalization_errors": self.normalization_errors_}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        errors = [float(v) for v in state["normalization_errors"]]
        if len(errors) != self.n_ensemble or not all(math.isfinite(e) and e >= 0 for e in errors):
            raise ValueError("one finite normalization error per ensemble member is needed")
        self.normalization_errors_ = errors
