r"""The learned watchdog saved: its scorer through the checked model format (issue #41 item 4).

A :class:`LearnedWatchdogMechanism` releases new records as the learned watchdog (Hsu, Asoodeh
and Calmon §IV) released the audited ones: each record's log-lift is scored by the model fitted
on every audited record, and the record is flagged when its risk
:math:`\max_s |\hat i(s, x)|` breaks epsilon (the audit's point rule) or, at the credible
margin ``confidence`` the audit ended with, when its probability of breaking exceeds
``1 - confidence`` (:func:`privwatch.estimators.margin_flags`, the spread of the audit's fold
models); a flagged record is released with every observed value replaced by the marker (the
flagged records merged into one released value), the others unchanged.

The file is one :mod:`privwatch._serialization` document of kind ``LearnedWatchdog``: the
mechanism's settings and the recalibration in its JSON state, and each model (the scorer, then
its fold models) as that model's own checked document (its class's ``save``), nested: state
under ``models`` and arrays under ``<i>/<name>``. Loading checks the whole file's digests,
then rebuilds each model through its class's own checked ``load`` (only the estimator classes
of :data:`LOADERS`); no pickle, no code execution.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._serialization import read_model, reconstructing, write_model
from .._validation import check_nonnegative
from ..estimators import Calibration, margin_flags, recalibrate
from ..exceptions import TamperedFileError, ValidationError

__all__ = ["LEARNED_KIND", "LearnedWatchdogMechanism"]

#: The ``kind`` of a saved learned watchdog in the checked model format.
LEARNED_KIND = "LearnedWatchdog"
#: The estimator classes a saved learned watchdog may hold, by the ``kind`` of their files (each
#: a class of :mod:`privwatch.estimators`, imported when a model is saved or loaded: the learned
#: families load scikit-learn and PyTorch).
LOADERS = ("PosteriorLift", "ClassifierLift", "DVLift", "MixtureLift")


def _embedded(model: Any, where: Path) -> tuple[str, dict[str, Any], dict[str, np.ndarray]]:
    """A model's own checked document (its class's ``save``), read back: kind, state, arrays."""
    kind = type(model).__name__
    if kind not in LOADERS or not callable(getattr(model, "save", None)):
        raise ValidationError(
            f"a learned watchdog saves its scorer through the checked model format, which holds "
            f"{sorted(LOADERS)}; this audit's scorer is a {kind} (refit with one of them)."
        )
    model.save(where)
    state, arrays = read_model(where, kind)
    return kind, state, arrays


def _rebuilt(kind: object, state: Any, arrays: dict[str, np.ndarray], where: Path) -> Any:
    """A nested model rebuilt through its class's own checked ``load``."""
    if not isinstance(kind, str) or kind not in LOADERS:
        raise ValueError(f"model kind {str(kind)[:40]!r} is not one of {sorted(LOADERS)}")
    write_model(where, kind, state, arrays)
    from .. import estimators

    return getattr(estimators, kind).load(where)


class LearnedWatchdogMechanism:
    """A fitted learned watchdog (see the module docstring).

    ``scorer``: the log-lift model fitted on every audited record; ``fold_models``: the fold
    models of its cross-fitting, ``groups`` per split (their grouped-jackknife spread; empty
    when ``confidence`` is None); ``calibration``: the recalibration the audit fitted.
    """

    def __init__(
        self,
        scorer: Any,
        observed: list[str],
        calibration: Calibration,
        *,
        fold_models: list[Any] | None = None,
        groups: int = 5,
        sensitive: str,
        epsilon: float,
        disclosure: str,
        confidence: float | None,
        status: str,
        marker: str,
        method: str = "watchdog",
        input_name: str | None = None,
        input_sha256: str | None = None,
    ) -> None:
        self.scorer = scorer
        self.observed = [str(c) for c in observed]
        self.calibration = calibration
        self.fold_models = list(fold_models or [])
        self.groups = int(groups)
        self.sensitive = str(sensitive)
        self.epsilon = check_nonnegative(epsilon, "epsilon")
        if disclosure not in ("both", "positive"):
            raise ValidationError(f"`disclosure` must be 'both' or 'positive'; got {disclosure!r}.")
        self.disclosure = str(disclosure)
        if confidence is not None and not 0.0 < float(confidence) < 1.0:
            raise ValidationError(
                f"`confidence` must be within (0, 1) or None; got {confidence!r}."
            )
        self.confidence = None if confidence is None else float(confidence)
        if self.confidence is not None and (
            self.groups < 2 or not self.fold_models or len(self.fold_models) % self.groups
        ):
            raise ValidationError(
                "a margin rule needs the fold models, a whole number of splits of `groups` >= 2."
            )
        k = len(calibration.prior)
        if calibration.theta.shape != (k + 1,) or calibration.cov.shape != (k + 1, k + 1):
            raise ValidationError("`calibration` must match the sensitive values of the scorer.")
        self.status, self.marker, self.method = str(status), str(marker), str(method)
        self.input_name, self.input_sha256 = input_name, input_sha256

    # ------------------------------------------------------------------ releasing
    def _frame(self, df: pd.DataFrame) -> pd.DataFrame:
        absent = [c for c in self.observed if c not in df.columns]
        if absent:
            raise ValidationError(
                f"the new data must have the observed columns of the mechanism; missing {absent}."
            )
        return df[self.observed].reset_index(drop=True)

    def _spread(self, frame: pd.DataFrame) -> np.ndarray:
        """The fold models' grouped-jackknife spread of each log-lift (as the audit's)."""
        k = self.groups
        draws = np.stack([m.log_lift(frame) for m in self.fold_models])
        split = draws.reshape(len(self.fold_models) // k, k, *draws.shape[1:])
        dev = split - split.mean(axis=1, keepdims=True)
        return np.asarray(np.sqrt((k - 1) / k * (dev**2).sum(axis=1).mean(axis=0)))

    def log_lift(self, df: pd.DataFrame) -> np.ndarray:
        """The log-lift of each record recalibrated as the audit judged it (records x values;
        the flags use the scorer's own)."""
        return recalibrate(self.scorer.log_lift(self._frame(df)), self.calibration)

    def flags(self, df: pd.DataFrame) -> np.ndarray:
        """Which records are merged into the marker."""
        frame = self._frame(df)
        ll = self.scorer.log_lift(frame)  # the audit flags on the model's own log-lift
        if self.confidence is None:
            return margin_flags(ll, np.zeros_like(ll), self.epsilon, self.disclosure)
        sd = self._spread(frame)
        return margin_flags(ll, sd, self.epsilon, self.disclosure, self.confidence)

    def release(self, df: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        """``(released, flags)``: the released observed columns of ``df`` (one row per record,
        in order; a flagged record's values all replaced by the marker, the others unchanged)
        and which records were flagged."""
        flags = self.flags(df)
        out = self._frame(df).astype(object)
        out.loc[flags, :] = self.marker
        return out, flags

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        """The released observed columns of ``df`` (see :meth:`release`)."""
        return self.release(df)[0]

    # ------------------------------------------------------------------ the file
    def save(self, path: str | Path) -> Path:
        """Write the checked model file (kind ``LearnedWatchdog``) atomically."""
        p = Path(path)
        models, arrays = [], {}
        with tempfile.TemporaryDirectory() as tmp:
            for i, model in enumerate([self.scorer, *self.fold_models]):
                kind, state, held = _embedded(model, Path(tmp) / f"{i}.json")
                models.append({"kind": kind, "state": state})
                arrays.update({f"{i}/{name}": a for name, a in held.items()})
        arrays["calibration_theta"] = self.calibration.theta
        arrays["calibration_cov"] = self.calibration.cov
        arrays["calibration_prior"] = self.calibration.prior
        state = {
            "observed": self.observed, "sensitive": self.sensitive, "epsilon": self.epsilon,
            "disclosure": self.disclosure, "confidence": self.confidence, "groups": self.groups,
            "status": self.status, "marker": self.marker, "method": self.method,
            "input": {"name": self.input_name, "sha256": self.input_sha256}, "models": models,
        }  # fmt: skip
        write_model(p, LEARNED_KIND, state, arrays)
        return p

    @classmethod
    def load(cls, path: str | Path) -> LearnedWatchdogMechanism:
        """Read a file written by :meth:`save`; a tampered or foreign file raises
        :class:`~privwatch.exceptions.TamperedFileError`."""
        state, arrays = read_model(path, LEARNED_KIND)
        with reconstructing(path), tempfile.TemporaryDirectory() as tmp:
            entries = state["models"]
            if not isinstance(entries, list) or not entries:
                raise ValueError("the file holds no scorer")
            models = []
            for i, entry in enumerate(entries):
                prefix = f"{i}/"
                held = {n[len(prefix) :]: a for n, a in arrays.items() if n.startswith(prefix)}
                models.append(
                    _rebuilt(entry["kind"], entry["state"], held, Path(tmp) / f"{i}.json")
                )
            cal = Calibration(
                np.asarray(arrays["calibration_theta"], dtype=np.float64),
                np.asarray(arrays["calibration_cov"], dtype=np.float64),
                np.asarray(arrays["calibration_prior"], dtype=np.float64),
            )
            if not (np.isfinite(cal.theta).all() and np.isfinite(cal.cov).all()):
                raise ValueError("the recalibration must be finite")
            if not (cal.prior > 0).all() or abs(float(cal.prior.sum()) - 1.0) > 1e-9:
                raise ValueError("the recalibration's prior must be a positive pmf")
            if len(cal.prior) != len(models[0].sensitive_labels_):
                raise ValueError("the recalibration does not match the scorer's values")
            confidence = state["confidence"]
            return cls(
                models[0], list(state["observed"]), cal, fold_models=models[1:],
                groups=int(state["groups"]), sensitive=state["sensitive"],
                epsilon=float(state["epsilon"]), disclosure=state["disclosure"],
                confidence=None if confidence is None else float(confidence),
                status=state["status"], marker=state["marker"], method=state["method"],
                input_name=state["input"]["name"], input_sha256=state["input"]["sha256"],
            )  # fmt: skip
        raise TamperedFileError(f"`path` must be an intact privwatch model file; {path}.")
