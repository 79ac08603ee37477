"""``AutoLift``: choose the log-lift model family by held-out log-loss (issue #16, item 2)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._base import check_is_fitted
from .._rng import RNGLike, check_rng
from .._validation import check_open_fraction, check_positive_int
from ..exceptions import ValidationError
from ._base import FloatArray, LiftEstimator
from ._classifier import ClassifierLift
from ._dv import DVLift
from ._posterior import PosteriorLift
from ._preprocess import as_frame
from ._progress import progress_bar

__all__ = ["CANDIDATES", "AutoLift", "make_lift_estimator", "posterior_log_loss"]

#: Families AutoLift can choose from; the default set is all but ``"nwj"``.
CANDIDATES = ("quadratic_logistic", "gradient_boosting", "mlp", "dv", "nwj")
DEFAULT_CANDIDATES = ("quadratic_logistic", "gradient_boosting", "mlp", "dv")


def _candidate(name: str, seed: int, device: str) -> LiftEstimator:
    if name in ("quadratic_logistic", "gradient_boosting"):
        return PosteriorLift(family=name, rng=seed)
    neural: dict[str, Any] = {
        "n_ensemble": 1,
        "batch_size": 512,
        "patience": 15,
        "device": device,
        "rng": seed,
    }
    if name == "mlp":
        return ClassifierLift(**neural)
    return DVLift(objective=name, product="exact", **neural)


def posterior_log_loss(estimator: LiftEstimator, X: Any, s: ArrayLike) -> tuple[FloatArray, float]:
    r"""Held-out log-loss :math:`-\frac1n\sum_i \log \hat P(s_i|x_i)` of the posterior implied by
    a log-lift estimate, :math:`\hat P(s|x) = \hat P(s) e^{\hat i(s,x)}` (returned per record,
    the mean is the log-loss), and its expected calibration error (top-label, 10 equal-width
    bins)."""
    codes = estimator._sensitive_codes(s)
    log_post = estimator.log_lift(X) + np.log(estimator.prior_)[None, :]
    loss = np.asarray(-log_post[np.arange(len(codes)), codes], dtype=np.float64)
    post = np.exp(log_post)
    top, conf = post.argmax(axis=1), post.max(axis=1)
    bins = np.minimum((conf * 10).astype(int), 9)
    hit = (top == codes).astype(float)
    ece = sum(
        abs(hit[bins == b].mean() - conf[bins == b].mean()) * (bins == b).mean()
        for b in np.unique(bins)
    )
    return loss, float(ece)


class AutoLift(LiftEstimator):
    r"""Log-lift from the model family with the lowest held-out log-loss.

    The candidates (``"quadratic_logistic"`` and ``"gradient_boosting"``, see
    :class:`PosteriorLift`; ``"mlp"``, a temperature-calibrated :class:`ClassifierLift`;
    ``"dv"`` / ``"nwj"``, :class:`DVLift`) are fitted on a stratified subsample of at most
    ``selection_size`` records minus a ``validation_fraction`` split, and scored by the
    log-loss of the posterior each implies, :math:`\hat P(s|x) = \hat P(s) e^{\hat i(s,x)}`
    (a proper score: its expectation is the KL divergence to the true posterior up to a
    constant, so the lowest log-loss is the closest log-lift in that sense). The first family
    in ``candidates`` order (simplest first) whose log-loss is within one standard error of the
    paired per-record difference from the lowest is chosen (the one-standard-error rule: a
    difference the validation noise can explain does not buy a more variable model). The winner
    is refit
    on all records with its selected regularisation (neural winners on at most
    ``max_neural_rows`` records). ``selection_`` holds the table: family, held-out log-loss,
    calibration error, fit seconds, selected parameters, and which won; ``reason_`` says why.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 1500)
    >>> x = rng.normal(s[:, None] * 1.0, 1.0, size=(1500, 3))
    >>> est = AutoLift(candidates=("quadratic_logistic", "gradient_boosting"), rng=0).fit(x, s)
    >>> list(est.selection_["family"])
    ['quadratic_logistic', 'gradient_boosting']
    """

    def __init__(
        self,
        *,
        candidates: tuple[str, ...] = DEFAULT_CANDIDATES,
        selection_size: int = 20_000,
        validation_fraction: float = 0.25,
        max_neural_rows: int = 200_000,
        progress: bool = False,
        device: str = "cpu",
        rng: RNGLike = None,
    ) -> None:
        self.candidates = candidates
        self.selection_size = selection_size
        self.validation_fraction = validation_fraction
        self.max_neural_rows = max_neural_rows
        self.progress = progress
        self.device = device
        self.rng = rng

    def _check(self) -> None:
        bad = [c for c in self.candidates if c not in CANDIDATES]
        if bad or not self.candidates:
            raise ValidationError(
                f"`candidates` must be a non-empty tuple of {CANDIDATES}; got {self.candidates!r}."
            )
        check_positive_int(self.selection_size, "selection_size")
        check_positive_int(self.max_neural_rows, "max_neural_rows")
        check_open_fraction(self.validation_fraction, "validation_fraction")

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> AutoLift:
        """Select the family on a held-out split, then refit the winner on all records."""
        from sklearn.model_selection import train_test_split

        self._check()
        frame = as_frame(X).reset_index(drop=True)
        labels = np.asarray(s)
        codes = self._fit_sensitive(labels, len(frame))
        g = check_rng(self.rng)
        seeds = [int(v) for v in g.integers(0, 2**31 - 1, size=len(self.candidates) + 3)]
        rows = np.arange(len(frame))
        if len(frame) > self.selection_size:
            rows, _ = train_test_split(
                rows, train_size=self.selection_size, stratify=codes, random_state=seeds[0]
            )
        tr, va = train_test_split(
            rows, test_size=self.validation_fraction, stratify=codes[rows], random_state=seeds[1]
        )
        table: list[dict[str, Any]] = []
        fitted: list[LiftEstimator] = []
        per_record: list[FloatArray] = []
        with progress_bar(self.progress, "AutoLift: model selection", len(self.candidates)) as adv:
            for name, seed in zip(self.candidates, seeds[3:], strict=True):
                t0 = time.perf_counter()
                cand = _candidate(name, seed, self.device).fit(frame.iloc[tr], labels[tr])
                loss, ece = posterior_log_loss(cand, frame.iloc[va], labels[va])
                per_record.append(loss)
                frozen: dict[str, Any] = getattr(cand, "frozen_params", dict)()
                table.append(
                    {
                        "family": name,
                        "heldout_log_loss": float(loss.mean()),
                        "calibration_error": ece,
                        "fit_seconds": time.perf_counter() - t0,
                        "selected_params": frozen,
                    }
                )
                fitted.append(cand)
                adv()
        best = self._choose(table, per_record)
        self.selection_ = pd.DataFrame(table)
        self.reason_ = str(table[best]["reason"])
        self.best_name_ = str(table[best]["family"])
        final = fitted[best].frozen_estimator()
        if "rng" in final.get_params():
            final.set_params(rng=seeds[2])
        rows_all = np.arange(len(frame))
        if self.best_name_ in ("mlp", "dv", "nwj") and len(frame) > self.max_neural_rows:
            rows_all, _ = train_test_split(
                rows_all, train_size=self.max_neural_rows, stratify=codes, random_state=seeds[2]
            )
        self.best_ = final.fit(frame.iloc[rows_all], labels[rows_all])
        self.prior_ = self.best_.prior_
        return self

    @staticmethod
    def _choose(table: list[dict[str, Any]], per_record: list[FloatArray]) -> int:
        """One-standard-error rule: the first candidate (simplest first) whose held-out log-loss
        is within one standard error of the paired difference from the lowest one."""
        means = np.array([v.mean() for v in per_record])
        low = int(np.argmin(means))
        n = len(per_record[low])
        se = [
            float(np.std(v - per_record[low], ddof=1) / np.sqrt(n)) if k != low else 0.0
            for k, v in enumerate(per_record)
        ]
        best = next(k for k in range(len(table)) if means[k] - means[low] <= se[k])
        for k, row in enumerate(table):
            row["excess_over_lowest"] = float(means[k] - means[low])
            row["standard_error"] = se[k]
            row["chosen"] = k == best
            row["reason"] = (
                f"{row['family']}: held-out log-loss {means[k]:.4f} nats on {n} records, "
                + (
                    "the lowest"
                    if k == low
                    else f"{means[k] - means[low]:.4f} above {table[low]['family']} "
                    f"(standard error {se[k]:.4f})"
                )
                + ("; chosen: the simplest family within one standard error" if k == best else "")
            )
        return best

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Log-lift of the selected model (records x sorted sensitive values)."""
        check_is_fitted(self, "best_")
        return self.best_.log_lift(X)

    def frozen_estimator(self) -> LiftEstimator:
        """The selected family with its selected regularisation, unfitted."""
        check_is_fitted(self, "best_")
        return self.best_.frozen_estimator()

    def save(self, path: str | Path) -> None:
        """Save the selected model (load it with its own class, e.g. ``PosteriorLift.load``)."""
        check_is_fitted(self, "best_")
        save = getattr(self.best_, "save", None)
        if save is None:  # pragma: no cover - every family has save
            raise ValidationError(f"{type(self.best_).__name__} cannot be saved.")
        save(path)


def make_lift_estimator(
    name: str, *, rng: RNGLike = None, device: str = "cpu", progress: bool = False
) -> LiftEstimator:
    """The estimator behind a CLI ``--estimator NAME``: ``auto`` (:class:`AutoLift`), one
    family of :data:`CANDIDATES`, or ``plugin`` (:class:`PluginLift`)."""
    from ._plugin import PluginLift

    if name == "auto":
        return AutoLift(rng=rng, device=device, progress=progress)
    if name == "plugin":
        return PluginLift()
    if name in CANDIDATES:
        seed = int(check_rng(rng).integers(0, 2**31 - 1)) if rng is not None else None
        est = _candidate(name, 0, device)
        est.set_params(rng=seed)
        return est
    raise ValidationError(
        f"`estimator` must be 'auto', 'plugin' or one of {CANDIDATES}; got {name!r}."
    )
