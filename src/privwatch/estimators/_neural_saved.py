"""Saving and loading a fitted neural log-lift estimator without pickle.

:class:`SavedNetworks` is the part of :class:`~privwatch.estimators._neural.NeuralLift` that
writes its parameters, labels, preprocessing and weights to a checksummed privwatch model file
(:mod:`privwatch._serialization`) and rebuilds the estimator from one, checking every shape
before any network is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .._base import check_is_fitted
from .._serialization import check_array, read_model, reconstructing, write_model
from ._saved_state import checked_preprocessor, checked_prior, mlp_shapes

__all__ = ["SavedNetworks"]


class SavedNetworks:
    """``save`` / ``load`` of the neural estimators (mixed into
    :class:`~privwatch.estimators._neural.NeuralLift`)."""

    def _extra_state(self) -> dict[str, Any]:
        return {}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        return None

    def save(self: Any, path: str | Path) -> None:
        """Write ``path``: a checksummed privwatch model file (JSON parameters, preprocessing and
        labels; the weights as checksummed arrays; see :mod:`privwatch._serialization`).
        Loading never executes code."""
        check_is_fitted(self, "models_")
        params = self.get_params()
        params["hidden"] = [int(h) for h in params["hidden"]]
        params["rng"] = None
        params["device"] = "cpu"
        state = {
            "params": params,
            "sensitive_labels": list(self.sensitive_labels_),
            "preprocessor": self.preprocessor_.to_dict(),
            "extra": self._extra_state(),
        }
        arrays = {"prior": np.asarray(self.prior_, dtype=np.float64)}
        for k, m in enumerate(self.models_):
            for name, v in m.state_dict().items():
                arrays[f"{k}.{name}"] = v.detach().cpu().contiguous().numpy()
        write_model(path, type(self).__name__, state, arrays)

    @classmethod
    def load(cls: Any, path: str | Path) -> Any:
        """Load a file written by :meth:`save`; a tampered or truncated file raises
        :class:`~privwatch.exceptions.TamperedFileError` (sizes beyond the memory budget
        :class:`~privwatch.exceptions.MemoryBudgetError`) before any network is built."""
        state, arrays = read_model(path, cls.__name__)
        with reconstructing(path):
            est = cls(**state["params"])
            est._check()
            if est.device != "cpu":
                raise ValueError("a saved estimator loads on the CPU")
            est.sensitive_labels_ = list(state["sensitive_labels"])
            est.preprocessor_ = checked_preprocessor(state["preprocessor"])
            est.prior_ = checked_prior(path, arrays, len(est.sensitive_labels_))
            if not 0 < est.n_ensemble <= len(arrays) or len(est.hidden) > len(arrays):
                raise ValueError("more ensemble members or layers than stored weights")
            shapes = mlp_shapes(
                est.preprocessor_.n_features_, est.hidden, est._n_outputs(), est.dropout
            )
            expected = {f"{k}.{n}": s for k in range(est.n_ensemble) for n, s in shapes}
            stored = {n: a.shape for n, a in arrays.items() if n != "prior"}
            if stored != expected:
                raise ValueError("the stored weights do not match the saved architecture")
            for name in expected:
                check_array(path, arrays, name, ndim=len(expected[name]))
            est._load_extra_state(state["extra"])
        est.models_ = [est._member(arrays, k) for k in range(est.n_ensemble)]
        from .._torch import torch

        est._log_prior = torch.as_tensor(np.log(est.prior_), dtype=torch.float32)
        return est

    def _member(self: Any, arrays: dict[str, Any], k: int) -> Any:
        """Network ``k`` built and filled from checked arrays of matching shapes."""
        from .._torch import mlp, torch

        n_in = self.preprocessor_.n_features_
        model = mlp(n_in, self.hidden, self._n_outputs(), self.dropout, self.activation)
        prefix = f"{k}."
        model.load_state_dict(
            {
                n[len(prefix) :]: torch.from_numpy(a)
                for n, a in arrays.items()
                if n.startswith(prefix)
            }
        )
        model.eval()
        return model
