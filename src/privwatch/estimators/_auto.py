"""``AutoLift``: choose the log-lift model family by held-out log-loss (issue #16, item 2)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from .._base import check_is_fitted
from .._rng import RNGLike, check_rng
from .._validation import check_positive_int
from ..exceptions import ValidationError
from ._base import LiftEstimator
from ._candidates import CANDIDATES
from ._classifier import ClassifierLift
from ._dv import DVLift
from ._lift import FloatArray
from ._mixture import MixtureLift
from ._pooled import MIN_WEIGHT, PooledLift, pooling_weights
from ._posterior import PosteriorLift
from ._preprocess import as_frame
from ._progress import progress_bar

__all__ = ["CANDIDATES", "AutoLift", "make_lift_estimator", "posterior_log_loss"]

SELECTION_RULES = ("stack", "lowest", "one_standard_error")
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
    log_post = estimator.log_lift(X) + np.log(estimator.prior_)[None, :]
    return _log_loss(log_post, estimator._sensitive_codes(s))


def _log_loss(log_post: FloatArray, codes: Any) -> tuple[FloatArray, float]:
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
    log-lift in that sense). By default (``selection_rule="stack"``) the families are combined:
    the log-linear pool of their posteriors with simplex weights that minimise the
    cross-validated log-loss of the pooled posterior on those same out-of-fold scores (the
    *super learner*; van der Laan, Polley & Hubbard 2007, *Super learner*, SAGMB 6; see
    :class:`PooledLift`); members under a weight of 0.02 are dropped, and a single surviving
    family is used alone. With ``selection_rule="lowest"`` the family with the lowest
    cross-validated log-loss is chosen (the cross-validation selector, or *discrete* super
    learner, which does asymptotically as well as the oracle choice among the candidates;
    van der Laan & Dudoit 2003), or with
    ``selection_rule="one_standard_error"`` the first family in ``candidates`` order (simplest
    first) whose log-loss is within one standard error of the paired per-record difference
    from the lowest (a difference the validation noise can explain does not
    buy a more variable model). Each chosen family is then fitted on the whole sample (its own
    regularisation search) and, on larger data, refit with the regularisation it selected on
    the records, at most ``max_refit_rows`` of them (a stratified sample; ``None``: all), neural
    families on at most ``max_neural_rows``: the searches run on the selection sample only, and a
    refit costs at most a fixed number of rows (a model of a few hundred parameters gains little
    past 500,000 records: its estimation error shrinks as 1/sqrt(n)). ``selection_`` holds the
    table: family, cross-validated log-loss, calibration error (top-label ECE, 10 bins, mean
    over the folds), fit seconds, parameters selected in the last fold, stacking ``weight`` and
    which were chosen; ``reason_`` says why.
    :meth:`model_variance` is the chosen families' disagreement, which the intervals of
    :meth:`fit_score` include (model error, not only resampling variance).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 1500)
    >>> x = rng.normal(s[:, None] * 1.0, 1.0, size=(1500, 3))
    >>> est = AutoLift(candidates=("quadratic_logistic", "gradient_boosting"), rng=0).fit(x, s)
    >>> list(est.selection_["family"])
    ['quadratic_logistic', 'gradient_boosting']
    >>> round(float(est.selection_["weight"].sum()), 6)
    1.0
    """

    def __init__(
        self,
        *,
        candidates: tuple[str, ...] = DEFAULT_CANDIDATES,
        selection_size: int = 20_000,
        selection_cv: int = 3,
        selection_rule: str = "stack",
        max_neural_rows: int = 200_000,
        max_refit_rows: int | None = 500_000,
        progress: bool = False,
        device: str = "cpu",
        rng: RNGLike = None,
    ) -> None:
        self.candidates = candidates
        self.selection_size = selection_size
        self.selection_cv = selection_cv
        self.selection_rule = selection_rule
        self.max_neural_rows = max_neural_rows
        self.max_refit_rows = max_refit_rows
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
        if self.max_refit_rows is not None:
            check_positive_int(self.max_refit_rows, "max_refit_rows")
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
        oof: list[FloatArray] = []
        total = len(self.candidates) * len(splits)
        with progress_bar(self.progress, "AutoLift: model selection", total) as adv:
            for name, seed in zip(self.candidates, seeds[3:], strict=True):
                row, loss, log_post = self._score_family(
                    name, seed, frame.iloc[rows], labels[rows], codes[rows], splits, adv
                )
                per_record.append(loss)
                oof.append(log_post)
                table.append(row)
        rule = self.selection_rule
        best = self._choose(table, per_record, "lowest" if rule == "stack" else rule)
        weights = np.zeros(len(table))
        weights[best] = 1.0
        if rule == "stack":
            weights = self._pool(table, oof, codes[rows])
        else:
            for k, row in enumerate(table):
                row["weight"] = float(weights[k])
        self.selection_ = pd.DataFrame(table)
        chosen = [k for k in range(len(table)) if weights[k] > 0]
        members = [
            self._fit_member(str(table[k]["family"]), seeds[2], frame, labels, codes, rows)
            for k in chosen
        ]
        if len(members) == 1:
            self.best_: LiftEstimator = members[0]
            self.best_name_ = str(table[chosen[0]]["family"])
            self.reason_ = str(table[chosen[0]]["reason"])
        else:
            names = tuple(str(table[k]["family"]) for k in chosen)
            pooled = PooledLift.from_fitted(members, weights[chosen], names)
            self.best_, self.best_name_ = pooled, "stack: " + pooled.describe()
            self.reason_ = self._pool_reason
        self.prior_ = self.best_.prior_
        return self

    def _score_family(
        self,
        name: str,
        seed: int,
        frame: pd.DataFrame,
        labels: NDArray[Any],
        codes: NDArray[np.int64],
        splits: list[tuple[NDArray[np.int64], NDArray[np.int64]]],
        advance: Callable[[], None],
    ) -> tuple[dict[str, Any], FloatArray, FloatArray]:
        """Family ``name`` cross-validated on the selection sample (``frame``, ``labels``,
        ``codes``): its row of ``selection_``, each record's held-out log-loss and its
        held-out log-posterior."""
        t0 = time.perf_counter()
        loss = np.empty(len(frame))
        log_post = np.empty((len(frame), len(self.prior_)))
        eces: list[float] = []
        frozen: dict[str, Any] = {}
        for tr, va in splits:
            cand = _candidate(name, seed, self.device)
            cand.fit(frame.iloc[tr], labels[tr])
            part = cand.log_lift(frame.iloc[va]) + np.log(cand.prior_)[None, :]
            log_post[va] = part
            loss[va], ece = _log_loss(part, codes[va])
            eces.append(ece)
            frozen = getattr(cand, "frozen_params", dict)()
            advance()
        row = {
            "family": name,
            "heldout_log_loss": float(loss.mean()),
            "calibration_error": float(np.mean(eces)),
            "fit_seconds": time.perf_counter() - t0,
            "selected_params": frozen,
        }
        return row, loss, log_post

    def _fit_member(
        self, name: str, seed: int, frame: pd.DataFrame, labels: Any, codes: Any, rows: Any
    ) -> LiftEstimator:
        """Fit one family on the selection sample (its own regularisation search), then refit it
        with that regularisation on all records, or on a stratified sample of at most
        max_refit_rows (max_neural_rows for neural families)."""
        from sklearn.model_selection import train_test_split

        model = _candidate(name, seed, self.device).fit(frame.iloc[rows], labels[rows])
        rows_all = np.arange(len(frame))
        cap = self.max_neural_rows if name in ("mlp", "dv", "nwj") else self.max_refit_rows
        if cap is not None and len(frame) > cap:
            rows_all, _ = train_test_split(
                rows_all, train_size=cap, stratify=codes, random_state=seed
            )
        if len(rows_all) > len(rows):  # refit on all records with the selected regularisation
            model = model.frozen_estimator().fit(frame.iloc[rows_all], labels[rows_all])
        return model

    def _pool(self, table: list[dict[str, Any]], oof: list[FloatArray], codes: Any) -> FloatArray:
        """Super-learner weights on the out-of-fold log-posteriors; members under
        :data:`MIN_WEIGHT` dropped and the rest renormalised; the reason written down."""
        weights = pooling_weights(oof, codes)
        weights[weights < MIN_WEIGHT] = 0.0
        weights /= weights.sum()
        pooled = np.tensordot(weights, np.stack(oof), axes=1)
        loss, _ = _log_loss(pooled - logsumexp(pooled, axis=1)[:, None], codes)
        for k, row in enumerate(table):
            row["weight"] = float(weights[k])
            row["chosen"] = bool(weights[k] > 0)
        low = min(table, key=lambda r: float(r["heldout_log_loss"]))
        shares = ", ".join(f"{r['family']} {r['weight']:.2f}" for r in table)
        self._pool_reason = (
            f"stacked (super learner): weights {shares} "
            f"minimise the held-out log-loss of the pooled posterior, {loss.mean():.4f} nats on "
            f"{len(codes)} records (best single family {low['family']}: "
            f"{float(low['heldout_log_loss']):.4f})"
        )
        return weights

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

    def model_variance(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Between-family variance of each log-lift (zero when one family was chosen; see
        :meth:`PooledLift.model_variance`)."""
        check_is_fitted(self, "best_")
        if isinstance(self.best_, PooledLift):
            return self.best_.model_variance(X)
        return np.zeros((len(as_frame(X)), len(self.prior_)))

    def frozen_estimator(self) -> LiftEstimator:
        """The selected family with its selected regularisation, unfitted."""
        check_is_fitted(self, "best_")
        return self.best_.frozen_estimator()

    def save(self, path: str | Path) -> None:
        """Save the selected model (load it with its own class, e.g. ``PosteriorLift.load``)."""
        check_is_fitted(self, "best_")
        save = getattr(self.best_, "save", None)
        if save is None:
            raise ValidationError(
                f"a stacked AutoLift ({self.best_name_}) cannot be saved as one file; fit it with "
                "`selection_rule='lowest'` to save the single chosen family."
            )
        save(path)


def make_lift_estimator(
    name: str, *, rng: RNGLike = None, device: str = "cpu", progress: bool = False
) -> LiftEstimator:
    """The estimator behind ``estimator=NAME`` of an audit: ``auto`` (:class:`AutoLift`), one
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
