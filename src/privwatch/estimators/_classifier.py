"""Log-lift from a probabilistic classifier: i(s, x) = log P^(s|x) - log P^(s)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

from .._base import check_is_fitted
from .._rng import RNGLike, check_rng
from ..exceptions import ValidationError
from ._lift import FloatArray
from ._neural import NeuralLift
from ._preprocess import TabularPreprocessor, as_frame

__all__ = ["ClassifierLift"]


class ClassifierLift(NeuralLift):
    r"""Log-lift from a classifier's posterior (Hsu, Asoodeh, Calmon §IV, first network).

    .. math:: \hat i(s, x) = \log \hat P_{S|X}(s|x) - \log \hat P_S(s)

    By default a torch MLP trained with cross-entropy, with early stopping on a validation split
    and **temperature scaling** fitted on that split (``calibrate=True``): a posterior that is off
    by a constant factor gives a biased log-lift. ``classifier=`` takes any scikit-learn
    classifier with ``predict_proba`` instead (fitted on the preprocessed features of the whole
    training set; calibration is then the classifier's business). The estimate always satisfies
    :math:`\sum_s \hat P(s) e^{\hat i(s, x)} = 1`.

    Parameters are those of the neural estimators (``hidden``, ``epochs``, ``batch_size``, ``lr``,
    ``weight_decay``, ``validation_fraction``, ``patience``, ``progress``, ``rng``) plus
    ``classifier`` and ``calibrate``.
    """

    # every parameter is named (no **kwargs): scikit-learn's get_params/clone read the signature
    def __init__(
        self,
        *,
        classifier: Any = None,
        calibrate: bool = True,
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
        self.classifier = classifier
        self.calibrate = calibrate

    def _loss(self, model: Any, x: Any, s: Any, *, generator: Any, evaluation: bool = False) -> Any:
        from .._torch import torch

        return torch.nn.functional.cross_entropy(model(x), s)

    def _init_members(self) -> None:
        self.temperatures_: list[float] = []

    def _stackable(self) -> bool:
        return self.classifier is None

    def _stacked_loss(self) -> tuple[str, str | None]:
        return "ce", None

    def _check_streamable(self) -> None:
        if self.classifier is not None:
            raise ValidationError(
                "`classifier` must be None to fit from a streamed source (a scikit-learn "
                f"classifier fits in memory); got {type(self.classifier).__name__}."
            )

    def _after_fit(self, k: int, x_val: Any, s_val: Any) -> None:
        if not self.calibrate:
            self.temperatures_.append(1.0)
            return
        from .._torch import torch

        with torch.no_grad():
            logits = self.models_[k](x_val).double().cpu().numpy()
        labels = s_val.cpu().numpy()

        def nll(log_t: float) -> float:
            lp = log_softmax(logits / math.exp(log_t), axis=1)
            return float(-lp[np.arange(len(labels)), labels].mean())

        res = minimize_scalar(nll, bounds=(-3.0, 3.0), method="bounded")
        self.temperatures_.append(float(math.exp(res.x)))

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> ClassifierLift:
        if self.classifier is None:
            super().fit(X, s)
            return self
        if not hasattr(self.classifier, "predict_proba"):
            raise ValidationError(
                "`classifier` must have a predict_proba method (a scikit-learn classifier); "
                f"got {type(self.classifier).__name__}."
            )
        frame = as_frame(X)
        codes = self._fit_sensitive(s, len(frame))
        self.preprocessor_ = TabularPreprocessor().fit(frame)
        from sklearn.base import clone

        model = clone(self.classifier)
        if "random_state" in model.get_params():
            model.set_params(random_state=int(check_rng(self.rng).integers(0, 2**31)))
        model.fit(self.preprocessor_.transform(frame), codes)
        self.models_ = [model]
        self.temperatures_ = [1.0]
        return self

    def _outputs(self, X: pd.DataFrame | ArrayLike) -> list[FloatArray]:
        if self.classifier is None:
            return super()._outputs(X)
        check_is_fitted(self, "models_")
        proba = np.asarray(self.models_[0].predict_proba(self.preprocessor_.transform(X)), float)
        return [np.log(np.clip(proba, 1e-300, 1.0))]

    def _member_log_lift(self, k: int, out: FloatArray) -> FloatArray:
        log_post = log_softmax(out / self.temperatures_[k], axis=1)
        return np.asarray(log_post - np.log(self.prior_)[None, :], dtype=np.float64)

    def save(self, path: Any) -> None:
        if self.classifier is not None:
            raise ValidationError(
                "a ClassifierLift wrapping a scikit-learn classifier cannot be saved without "
                "pickle; save the torch version (classifier=None) or refit."
            )
        super().save(path)

    def _extra_state(self) -> dict[str, Any]:
        return {"temperatures": self.temperatures_}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        temps = [float(t) for t in state["temperatures"]]
        if len(temps) != self.n_ensemble or not all(math.isfinite(t) and t > 0 for t in temps):
            raise ValueError("one finite positive temperature per ensemble member is needed")
        self.temperatures_ = temps
