"""Log-lift from scikit-learn posterior models: quadratic logistic regression and gradient-boosted
trees, each regularised by cross-validated log-loss (the baselines of issue #16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import log_softmax

from .._base import check_is_fitted
from .._rng import RNGLike, check_rng
from .._serialization import check_array, read_model, reconstructing, write_model
from .._validation import check_positive, check_positive_int, short_repr
from ..exceptions import ValidationError
from ._base import LiftEstimator
from ._lift import FloatArray, normalize_log_lift
from ._preprocess import TabularPreprocessor, as_frame
from ._saved_state import checked_preprocessor, checked_prior

__all__ = ["FAMILIES", "PosteriorLift"]

FAMILIES = ("quadratic_logistic", "gradient_boosting")
#: Inverse regularisation strengths tried by the quadratic logistic regression.
DEFAULT_CS = (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)
#: Tree sizes (leaves per tree) tried by the gradient-boosted trees.
DEFAULT_LEAVES = (4, 8, 16)
#: Records scored at a time (bounds the memory of the degree-2 design at prediction).
CHUNK_ROWS = 65_536


class PosteriorLift(LiftEstimator):
    r"""Log-lift from a regularised scikit-learn posterior model (classifier route).

    .. math:: \hat i(s, x) = \log \hat P_{S|X}(s|x) - \log \hat P_S(s)

    renormalised so that :math:`\sum_s \hat P(s) e^{\hat i(s, x)} = 1` (Hsu, Asoodeh, Calmon,
    §IV: any probabilistic classifier gives a lift estimate).

    ``family="quadratic_logistic"``: multinomial logistic regression on the degree-2 polynomial
    features of the standardised, one-hot encoded records; the L2 strength ``C`` is chosen among
    ``grid`` (default :data:`DEFAULT_CS`) by ``cv``-fold cross-validated log-loss, or fixed with
    ``C=``. ``family="gradient_boosting"``: ``HistGradientBoostingClassifier`` whose number of
    boosting rounds is chosen by early stopping on a held-out log-loss and whose tree size
    (``max_leaf_nodes``) is chosen among ``grid`` (default :data:`DEFAULT_LEAVES`) by the
    log-loss on that same held-out split (15 %), or fixed with ``max_leaf_nodes=``. Categorical
    columns are one-hot encoded inside (see :class:`TabularPreprocessor`). Log-loss-trained
    models are calibrated by construction; :class:`AutoLift` reports their calibration on
    held-out data.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 2000)
    >>> x = rng.normal(s[:, None] * 1.0, 1.0, size=(2000, 2))
    >>> est = PosteriorLift(rng=0).fit(x, s)
    >>> est.C_ in DEFAULT_CS
    True
    """

    def __init__(
        self,
        *,
        family: str = "quadratic_logistic",
        grid: tuple[float, ...] | None = None,
        C: float | None = None,
        max_leaf_nodes: int | None = None,
        cv: int = 3,
        max_iter: int = 1000,
        rng: RNGLike = None,
    ) -> None:
        self.family = family
        self.grid = grid
        self.C = C
        self.max_leaf_nodes = max_leaf_nodes
        self.cv = cv
        self.max_iter = max_iter
        self.rng = rng

    # ------------------------------------------------------------------ fit
    def _check(self) -> None:
        if self.family not in FAMILIES:
            raise ValidationError(f"`family` must be one of {FAMILIES}; got {self.family!r}.")
        check_positive_int(self.cv, "cv")
        if self.cv < 2:
            raise ValidationError(f"`cv` must be at least 2; got {self.cv}.")
        check_positive_int(self.max_iter, "max_iter")
        if self.C is not None and not (np.isfinite(self.C) and self.C > 0):
            raise ValidationError(f"`C` must be a positive finite number; got {self.C!r}.")
        if self.grid is not None and not all(  # NaN passes a plain comparison
            isinstance(v, (int, float, np.number)) and np.isfinite(v) and v > 0 for v in self.grid
        ):
            raise ValidationError(
                f"`grid` must hold positive finite numbers; got {short_repr(self.grid)}."
            )
        if self.max_leaf_nodes is not None:
            check_positive_int(self.max_leaf_nodes, "max_leaf_nodes")

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> PosteriorLift:
        """Fit the posterior model of ``s`` (sensitive labels) given ``X`` (records)."""
        self._check()
        frame = as_frame(X)
        codes = self._fit_sensitive(s, len(frame))
        if len(self.sensitive_labels_) < 2:
            raise ValidationError("`s` must take at least two values; got one.")
        seed = int(check_rng(self.rng).integers(0, 2**31 - 1))
        self.preprocessor_ = TabularPreprocessor().fit(frame)
        feats = self.preprocessor_.transform(frame).astype(np.float64)
        if self.family == "quadratic_logistic":
            self._fit_logistic(feats, codes, seed)
        else:
            self._fit_boosting(feats, codes, seed)
        return self

    def _folds(self, codes: Any, seed: int) -> Any:
        from sklearn.model_selection import StratifiedKFold

        n_min = int(np.bincount(codes).min())
        return StratifiedKFold(min(self.cv, max(2, n_min)), shuffle=True, random_state=seed)

    def _fit_logistic(self, feats: FloatArray, codes: Any, seed: int) -> None:
        from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
        from sklearn.preprocessing import PolynomialFeatures

        powers = np.asarray(
            PolynomialFeatures(2, include_bias=False).fit(feats[:1]).powers_, dtype=np.int64
        )
        z = _polynomial(feats, powers, np.float32)  # float32 + in place: 2M x 170 fits in ~1.4 GB
        mean = z.mean(axis=0, dtype=np.float64)
        z -= mean.astype(np.float32)
        # the variance in row blocks: z.std() would make a float64 copy of the whole design
        sq = sum(
            np.square(z[i : i + CHUNK_ROWS], dtype=np.float64).sum(axis=0)
            for i in range(0, len(z), CHUNK_ROWS)
        )
        scale = np.sqrt(np.asarray(sq, dtype=np.float64) / len(z))
        scale[scale == 0] = 1.0
        z /= scale.astype(np.float32)
        if self.C is None:
            model: Any = LogisticRegressionCV(
                Cs=list(self.grid or DEFAULT_CS),
                cv=self._folds(codes, seed),
                scoring="neg_log_loss",
                max_iter=self.max_iter,
                l1_ratios=(0.0,),
                use_legacy_attributes=False,
            ).fit(z, codes)
            self.C_ = float(np.ravel(model.C_)[0])
            scores = np.asarray(model.scores_).reshape(-1, len(model.Cs_)).mean(axis=0)
            self.cv_log_loss_ = {
                float(c): float(-v) for c, v in zip(model.Cs_, scores, strict=True)
            }
        else:
            model = LogisticRegression(C=self.C, max_iter=self.max_iter).fit(z, codes)
            self.C_ = float(self.C)
            self.cv_log_loss_ = {}
        coef, intercept = model.coef_, model.intercept_
        if coef.shape[0] == 1:  # binary: sklearn stores one row for class 1
            coef = np.vstack([np.zeros_like(coef), coef])
            intercept = np.array([0.0, intercept[0]])
        self.powers_ = powers
        self.scaler_ = (mean, scale)
        self.coef_, self.intercept_ = np.asarray(coef), np.asarray(intercept)

    def _fit_boosting(self, feats: FloatArray, codes: Any, seed: int) -> None:
        from sklearn.ensemble import HistGradientBoostingClassifier

        def make(leaves: int) -> Any:
            return HistGradientBoostingClassifier(
                max_leaf_nodes=leaves,
                learning_rate=0.1,
                max_iter=self.max_iter,
                l2_regularization=1.0,
                early_stopping=True,
                scoring="loss",
                validation_fraction=0.15,
                n_iter_no_change=10,
                random_state=seed,
            )

        if self.max_leaf_nodes is not None:
            self.max_leaf_nodes_ = int(self.max_leaf_nodes)
            self.cv_log_loss_ = {}
            self.model_ = make(self.max_leaf_nodes_).fit(feats, codes)
            return
        # every tree size sees the same early-stopping split (same random_state): its held-out
        # log-loss at the best round chooses the size, and that model is kept
        fitted = [make(int(k)).fit(feats, codes) for k in (self.grid or DEFAULT_LEAVES)]
        losses = [-float(np.max(m.validation_score_)) for m in fitted]
        best = int(np.argmin(losses))
        self.model_ = fitted[best]
        self.max_leaf_nodes_ = int(self.model_.max_leaf_nodes)
        self.cv_log_loss_ = {
            float(m.max_leaf_nodes): v for m, v in zip(fitted, losses, strict=True)
        }

    # ------------------------------------------------------------------ predict
    def _log_posterior(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        check_is_fitted(self, "preprocessor_")
        feats = self.preprocessor_.transform(X)
        out = np.empty((len(feats), len(self.prior_)))
        # in blocks of rows: the degree-2 design of 2M records would not fit in memory
        for start in range(0, len(feats), CHUNK_ROWS):
            block = feats[start : start + CHUNK_ROWS].astype(np.float64)
            if self.family == "gradient_boosting":
                proba = np.asarray(self.model_.predict_proba(block), dtype=np.float64)
                out[start : start + len(block)] = np.log(np.clip(proba, 1e-300, 1.0))
                continue
            z = _polynomial(block, self.powers_)
            z -= self.scaler_[0]
            z /= self.scaler_[1]
            logits = z @ self.coef_.T + self.intercept_
            out[start : start + len(block)] = log_softmax(logits, axis=1)
        return out

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Estimated log-lift ``i(s, x)`` (records x sensitive values, sorted labels)."""
        ll = self._log_posterior(X) - np.log(self.prior_)[None, :]
        return normalize_log_lift(ll, self.prior_)

    def frozen_params(self) -> dict[str, Any]:
        """Parameters that refit this model with its selected regularisation (for bootstraps)."""
        check_is_fitted(self, "preprocessor_")
        if self.family == "quadratic_logistic":
            return {"C": self.C_}
        return {"max_leaf_nodes": self.max_leaf_nodes_}

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Save a quadratic logistic model as JSON (no pickle; loading runs no code).

        Gradient-boosted trees are not saveable without pickle: refit them instead.
        """
        check_is_fitted(self, "preprocessor_")
        if self.family != "quadratic_logistic":
            raise ValidationError(
                "a PosteriorLift(family='gradient_boosting') cannot be saved without pickle; "
                "refit it, or save a quadratic_logistic one."
            )
        params = self.get_params()
        params["rng"] = None
        params["grid"] = None if self.grid is None else list(self.grid)
        state = {
            "params": params,
            "sensitive_labels": self.sensitive_labels_,
            "preprocessor": self.preprocessor_.to_dict(),
            "C": self.C_,
        }
        arrays = {
            "prior": np.asarray(self.prior_, dtype=np.float64),
            "powers": np.asarray(self.powers_, dtype=np.int64),
            "mean": np.asarray(self.scaler_[0]),
            "scale": np.asarray(self.scaler_[1]),
            "coef": np.asarray(self.coef_),
            "intercept": np.asarray(self.intercept_),
        }
        write_model(path, "PosteriorLift", state, arrays)

    @classmethod
    def load(cls, path: str | Path) -> PosteriorLift:
        """Load a file written by :meth:`save`; a tampered or truncated file raises
        :class:`~privwatch.exceptions.TamperedFileError` (see :mod:`privwatch._serialization`):
        every array's shape is checked against the preprocessor and the labels."""
        state, arrays = read_model(path, "PosteriorLift")
        with reconstructing(path):
            params = dict(state["params"])
            if params.get("grid") is not None:
                params["grid"] = tuple(params["grid"])
            est = cls(**params)
            if est.family != "quadratic_logistic":
                raise ValueError(f"family {est.family!r} is not saveable")
            labels = list(state["sensitive_labels"])
            pre = checked_preprocessor(state["preprocessor"])
            n_s, d = len(labels), pre.n_features_
            prior = checked_prior(path, arrays, n_s)
            powers = check_array(path, arrays, "powers", ndim=2, low=0)
            k = powers.shape[0]
            if powers.shape != (k, d) or not (k and powers.max() <= 2 and powers.sum(1).max() <= 2):
                raise ValueError("powers must be the degree-2 monomials of the features")
            mean = check_array(path, arrays, "mean", ndim=1)
            scale = check_array(path, arrays, "scale", ndim=1)
            coef = check_array(path, arrays, "coef", ndim=2)
            intercept = check_array(path, arrays, "intercept", ndim=1)
            if mean.shape != (k,) or scale.shape != (k,) or not scale.min() > 0:
                raise ValueError("the scaler must hold k means and k positive scales")
            if coef.shape != (n_s, k) or intercept.shape != (n_s,):
                raise ValueError("coef and intercept must have one row per sensitive label")
            est.sensitive_labels_ = labels
            est.prior_ = prior
            est.preprocessor_ = pre
            est.C_ = check_positive(state["C"], "C")
            est.cv_log_loss_ = {}
            est.powers_ = powers
            est.scaler_ = (mean, scale)
            est.coef_, est.intercept_ = coef, intercept
        return est


def _polynomial(feats: FloatArray, powers: Any, dtype: Any = np.float64) -> Any:
    """Monomials ``prod_j x_j ** powers[k, j]`` column by column (no n x k x d temporary)."""
    out = np.ones((feats.shape[0], powers.shape[0]), dtype=dtype)
    for k, row in enumerate(powers):
        for j in np.flatnonzero(row):
            out[:, k] *= feats[:, j] ** int(row[j])
    return out
