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
from .._validation import check_positive_int
from ..exceptions import ValidationError
from ._base import FloatArray, LiftEstimator
from ._classifier import ClassifierLift
from ._dv import DVLift
from ._mixture import MixtureLift
from ._posterior import PosteriorLift
from ._preprocess import as_frame
from ._progress import progress_bar

__all__ = ["CANDIDATES", "AutoLift", "make_lift_estimator", "posterior_log_loss"]

#: Families AutoLift can choose from (simplest first); the default set is all but ``"nwj"``.
CANDIDATES = ("quadratic_logistic", "gaussian_mixture", "gradient_boosting", "mlp", "dv", "nwj")
SELECTION_RULES = ("lowest", "one_standard_error")
DEFAULT_CANDIDATES = ("quadratic_logistic", "gaussian_mixture", "gradient_boosting", "mlp", "dv")


def _candidate(name: str, seed: int, device: str) -> LiftEstimator:
    if name in ("quadratic_logistic", "gradient_boosting"):
        return PosteriorLift(family=name, rng=seed)
    if name == "gaussian_mixture":
        return MixtureLift(rng=seed)
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
    :class:`PosteriorLift`; ``"gaussian_mixture"``, :class:`MixtureLift`; ``"mlp"``, a
    temperature-calibrated :class:`ClassifierLift`; ``"dv"`` / ``"nwj"``, :class:`DVLift`) are
    scored on a stratified subsample of at most ``selection_size`` records by ``selection_cv``-fold
    cross-validation: every record of the sample is scored once by a model that did not see it,
    with the log-loss of the posterior the candidate implies,
    :math:`\hat P(s|x) = \hat P(s) e^{\hat i(s,x)}` (a proper score: its expectation is the KL
    divergence to the true posterior up to a constant, so the lowest log-loss is the closest
    log-lift in that sense). The family with the lowest cross-validated log-loss is chosen
    (``selection_rule="lowest"``: the cross-validation selector, or *discrete super learner*,
    which does asymptotically as well as the oracle choice among the candidates; van der Laan,
    Polley & Hubbard 2007, *Super learner*, SAGMB 6; van der Laan & Dudoit 2003), or with
    ``selection_rule="one_standard_error"`` the first family in ``candidates`` order (simplest
    first) whose log-loss is within one standard error of the paired per-record difference
    from the lowest (a difference the validation noise can explain does not
    buy a more variable model). The winner is then fitted on the whole sample (its own
    regularisation search) and, on larger data, refit on all records with the regularisation it
    selected (neural winners on at most ``max_neural_rows`` records). ``selection_`` holds the
    table: family, cross-validated log-loss, calibration error (top-label ECE, 10 bins, mean over
    the folds), fit seconds, parameters selected in the last fold, and which won; ``reason_``
    says why.

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
        selection_cv: int = 3,
        selection_rule: str = "lowest",
        max_neural_rows: int = 200_000,
        progress: bool = False,
        device: str = "cpu",
        rng: RNGLike = None,
    ) -> None:
        self.candidates = candidates
        self.selection_size = selection_size
        self.selection_cv = selection_cv
        self.selection_rule = selection_rule
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
        if self.selection_rule not in SELECTION_RULES:
            raise ValidationError(
                f"`selection_rule` must be one of {SELECTION_RULES}; got {self.selection_rule!r}."
            )
        check_positive_int(self.selection_cv, "selection_cv")
        if self.selection_cv < 2:
            raise ValidationError(f"`selection_cv` must be at least 2; got {self.selection_cv}.")

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> AutoLift:
        """Select the family by cross-validated log-loss on the selection sample, fit the winner
        on that sample (its own regularisation search), then refit it on all records."""
        from sklearn.model_selection import StratifiedKFold, train_test_split

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
        rows = np.sort(rows)
        n_min = int(np.bincount(codes[rows], minlength=len(self.prior_)).min())
        if n_min < self.selection_cv:
            raise ValidationError(
                f"`selection_cv` must be at most the count of the rarest sensitive value in the "
                f"selection sample ({n_min}); got {self.selection_cv}."
            )
        folds = StratifiedKFold(self.selection_cv, shuffle=True, random_state=seeds[1])
        splits = list(folds.split(rows, codes[rows]))
        table: list[dict[str, Any]] = []
        per_record: list[FloatArray] = []
        total = len(self.candidates) * len(splits)
        with progress_bar(self.progress, "AutoLift: model selection", total) as adv:
            for name, seed in zip(self.candidates, seeds[3:], strict=True):
                t0 = time.perf_counter()
                loss = np.empty(len(rows))
                eces: list[float] = []
                frozen: dict[str, Any] = {}
                for tr, va in splits:
                    cand = _candidate(name, seed, self.device)
                    cand.fit(frame.iloc[rows[tr]], labels[rows[tr]])
                    loss[va], ece = posterior_log_loss(cand, frame.iloc[rows[va]], labels[rows[va]])
                    eces.append(ece)
                    frozen = getattr(cand, "frozen_params", dict)()
                    adv()
                per_record.append(loss)
                table.append(
                    {
                        "family": name,
                        "heldout_log_loss": float(loss.mean()),
                        "calibration_error": float(np.mean(eces)),
                        "fit_seconds": time.perf_counter() - t0,
                        "selected_params": frozen,
                    }
                )
        best = self._choose(table, per_record, self.selection_rule)
        self.selection_ = pd.DataFrame(table)
        self.reason_ = str(table[best]["reason"])
        self.best_name_ = str(table[best]["family"])
        neural = self.best_name_ in ("mlp", "dv", "nwj")
        model = _candidate(self.best_name_, seeds[2], self.device)
        self.best_ = model.fit(frame.iloc[rows], labels[rows])
        rows_all = np.arange(len(frame))
        if neural and len(frame) > self.max_neural_rows:
            rows_all, _ = train_test_split(
                rows_all, train_size=self.max_neural_rows, stratify=codes, random_state=seeds[2]
            )
        if len(rows_all) > len(rows):  # refit on all records with the selected regularisation
            self.best_ = model.frozen_estimator().fit(frame.iloc[rows_all], labels[rows_all])
        self.prior_ = self.best_.prior_
        return self

    @staticmethod
    def _choose(
        table: list[dict[str, Any]], per_record: list[FloatArray], rule: str = "lowest"
    ) -> int:
        """``rule="lowest"``: the lowest cross-validated log-loss; ``"one_standard_error"``: the
        first candidate (simplest first) within one paired standard error of the lowest."""
        means = np.array([v.mean() for v in per_record])
        low = int(np.argmin(means))
        n = len(per_record[low])
        se = [
            float(np.std(v - per_record[low], ddof=1) / np.sqrt(n)) if k != low else 0.0
            for k, v in enumerate(per_record)
        ]
        best = low
        if rule == "one_standard_error":
            best = next(k for k in range(len(table)) if means[k] - means[low] <= se[k])
        why = "the lowest" if rule == "lowest" else "the simplest family within one standard error"
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
                + (f"; chosen: {why}" if k == best else "")
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
