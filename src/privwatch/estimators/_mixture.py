r"""Log-lift from a generative model: a Gaussian mixture per sensitive value (mixture discriminant
analysis), its size and covariance shape chosen by cross-validated posterior log-loss."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from .._base import check_is_fitted
from .._rng import RNGLike, check_rng
from .._serialization import check_array, read_model, reconstructing, write_model
from .._validation import check_positive_int
from ..exceptions import ValidationError
from ._base import LiftEstimator
from ._lift import FloatArray
from ._preprocess import TabularPreprocessor, as_frame
from ._saved_state import checked_preprocessor, checked_prior

__all__ = ["COVARIANCES", "MixtureLift"]

COVARIANCES = ("spherical", "diag", "full")
#: Mixture sizes (components per sensitive value) tried by default.
DEFAULT_COMPONENTS = (1, 2, 3)


class MixtureLift(LiftEstimator):
    r"""Log-lift from class-conditional Gaussian mixtures (mixture discriminant analysis).

    .. math::

        \hat p(x|s) = \sum_{c=1}^{k} w_{s,c}\, \mathcal N(x; \mu_{s,c}, \Sigma_{s,c}),\qquad
        \hat i(s, x) = \log \hat p(x|s) - \log \sum_{s'} \hat P(s')\, \hat p(x|s')

    (the information density of the fitted model; Hastie & Tibshirani 1996, *Discriminant
    analysis by Gaussian mixtures*, JRSS-B 58). Each mixture is fitted by EM
    (``sklearn.mixture.GaussianMixture``) on the standardised, one-hot encoded records of one
    sensitive value. The size ``k`` (among ``components``) and the covariance shape (among
    ``covariances``: ``"spherical"``, ``"diag"``, ``"full"``) are chosen by the ``cv``-fold
    cross-validated log-loss of the posterior :math:`\hat P(s|x)` (a proper score of what the lift
    needs, not the likelihood of x) with the one-standard-error rule (the configuration with the
    fewest parameters whose log-loss is within one paired standard error of the lowest; Hastie,
    Tibshirani & Friedman, *Elements of Statistical Learning*, §7.10), or fixed with
    ``n_components=`` and ``covariance=``.

    A generative model: accurate when the records are close to Gaussian clusters, poor on
    one-hot columns (their covariance is regularised by ``reg_covar``); :class:`AutoLift` keeps
    it only when its held-out log-loss wins.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 2000)
    >>> x = rng.normal(s[:, None] * 1.0, 1.0, size=(2000, 2))
    >>> est = MixtureLift(rng=0).fit(x, s)
    >>> est.n_components_ in DEFAULT_COMPONENTS
    True
    """

    def __init__(
        self,
        *,
        components: tuple[int, ...] = DEFAULT_COMPONENTS,
        covariances: tuple[str, ...] = COVARIANCES,
        n_components: int | None = None,
        covariance: str | None = None,
        cv: int = 3,
        n_init: int = 4,
        reg_covar: float = 1e-4,
        rng: RNGLike = None,
    ) -> None:
        self.components = components
        self.covariances = covariances
        self.n_components = n_components
        self.covariance = covariance
        self.cv = cv
        self.n_init = n_init
        self.reg_covar = reg_covar
        self.rng = rng

    def _check(self) -> None:
        bad = [c for c in (*self.covariances, self.covariance) if c not in (*COVARIANCES, None)]
        if bad or not self.covariances:
            raise ValidationError(
                f"`covariances` must be a non-empty tuple of {COVARIANCES}; got {bad or '()'}."
            )
        for k in (*self.components, *(() if self.n_components is None else (self.n_components,))):
            check_positive_int(k, "components")
        if not self.components:
            raise ValidationError("`components` must be a non-empty tuple of ints; got ().")
        check_positive_int(self.cv, "cv")
        if self.cv < 2:
            raise ValidationError(f"`cv` must be at least 2; got {self.cv}.")
        check_positive_int(self.n_init, "n_init")
        if not (np.isfinite(self.reg_covar) and self.reg_covar > 0):
            raise ValidationError(
                f"`reg_covar` must be a positive finite number; got {self.reg_covar!r}."
            )

    def _mixtures(self, feats: FloatArray, codes: Any, k: int, cov: str, seed: int) -> list[Any]:
        from sklearn.mixture import GaussianMixture

        out = []
        for s in range(len(self.sensitive_labels_)):
            rows = feats[codes == s]
            model = GaussianMixture(
                min(k, len(rows)),
                covariance_type=cov,
                reg_covar=self.reg_covar,
                n_init=self.n_init,
                random_state=seed,
            )
            out.append(model.fit(rows))
        return out

    @staticmethod
    def _log_joint(mixtures: list[Any], feats: FloatArray, prior: FloatArray) -> FloatArray:
        """``log P(s) + log p(x|s)`` (records x sensitive values)."""
        cols = [m.score_samples(feats) for m in mixtures]
        return np.asarray(np.stack(cols, axis=1) + np.log(prior)[None, :], dtype=np.float64)

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> MixtureLift:
        """Fit one Gaussian mixture per sensitive value of ``s`` on the records ``X``."""

        self._check()
        frame = as_frame(X)
        codes = self._fit_sensitive(s, len(frame))
        if len(self.sensitive_labels_) < 2:
            raise ValidationError("`s` must take at least two values; got one.")
        seed = int(check_rng(self.rng).integers(0, 2**31 - 1))
        self.preprocessor_ = TabularPreprocessor().fit(frame)
        feats = self.preprocessor_.transform(frame).astype(np.float64)
        if self.n_components is not None and self.covariance is not None:
            grid = [(int(self.n_components), str(self.covariance))]
        else:
            ks = self.components if self.n_components is None else (self.n_components,)
            covs = self.covariances if self.covariance is None else (self.covariance,)
            grid = [(int(k), str(c)) for c in covs for k in ks]
        self.cv_log_loss_: dict[str, float] = {}
        if len(grid) > 1:
            grid = [self._select(feats, codes, grid, seed)]
        self.n_components_, self.covariance_ = grid[0]
        self.mixtures_ = self._mixtures(feats, codes, *grid[0], seed)
        return self

    def _select(
        self, feats: FloatArray, codes: Any, grid: list[tuple[int, str]], seed: int
    ) -> tuple[int, str]:
        """Cross-validated posterior log-loss of every (size, shape); the configuration with the
        fewest parameters within one standard error (paired, per record) of the lowest."""
        from sklearn.model_selection import StratifiedKFold

        n_min = int(np.bincount(codes).min())
        folds = StratifiedKFold(min(self.cv, max(2, n_min)), shuffle=True, random_state=seed)
        splits = list(folds.split(feats, codes))
        d = feats.shape[1]
        per_comp = {"spherical": d + 1, "diag": 2 * d, "full": d + d * (d + 1) // 2}
        grid = sorted(grid, key=lambda g: (g[0] * per_comp[g[1]], g[0]))
        losses = np.empty((len(grid), len(codes)))
        for j, (k, cov) in enumerate(grid):
            for tr, va in splits:
                prior = np.bincount(codes[tr], minlength=len(self.prior_)) / len(tr)
                lj = self._log_joint(
                    self._mixtures(feats[tr], codes[tr], k, cov, seed), feats[va], prior
                )
                post = lj - logsumexp(lj, axis=1)[:, None]
                losses[j, va] = -post[np.arange(len(va)), codes[va]]
            self.cv_log_loss_[f"{cov}/{k}"] = float(losses[j].mean())
        low = int(np.argmin(losses.mean(axis=1)))
        se = (losses - losses[low]).std(axis=1, ddof=1) / np.sqrt(len(codes))
        excess = losses.mean(axis=1) - losses[low].mean()
        return grid[int(np.flatnonzero(excess <= se)[0])]

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Estimated log-lift ``i(s, x)`` (records x sensitive values, sorted labels)."""
        check_is_fitted(self, "mixtures_")
        feats = self.preprocessor_.transform(X).astype(np.float64)
        lj = self._log_joint(self.mixtures_, feats, self.prior_)
        log_px = logsumexp(lj, axis=1)[:, None]
        return np.asarray(lj - np.log(self.prior_)[None, :] - log_px, dtype=np.float64)

    def frozen_params(self) -> dict[str, Any]:
        """Parameters that refit this model with its selected size and covariance shape."""
        check_is_fitted(self, "mixtures_")
        return {"n_components": self.n_components_, "covariance": self.covariance_}

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Save as JSON (weights, means, precision Cholesky factors; no pickle)."""
        check_is_fitted(self, "mixtures_")
        params = self.get_params()
        params["rng"] = None
        params["components"] = list(self.components)
        params["covariances"] = list(self.covariances)
        state = {
            "params": params,
            "sensitive_labels": self.sensitive_labels_,
            "preprocessor": self.preprocessor_.to_dict(),
            "selected": [self.n_components_, self.covariance_],
        }
        arrays: dict[str, Any] = {"prior": np.asarray(self.prior_, dtype=np.float64)}
        for k, m in enumerate(self.mixtures_):
            arrays[f"{k}.weights"] = np.asarray(m.weights_, dtype=np.float64)
            arrays[f"{k}.means"] = np.asarray(m.means_, dtype=np.float64)
            arrays[f"{k}.precisions_cholesky"] = np.asarray(m.precisions_cholesky_, np.float64)
        write_model(path, "MixtureLift", state, arrays)

    @classmethod
    def load(cls, path: str | Path) -> MixtureLift:
        """Load a file written by :meth:`save`; a tampered or truncated file raises
        :class:`~privwatch.exceptions.TamperedFileError` (see :mod:`privwatch._serialization`):
        weights, means and Cholesky factors are checked against the covariance shape."""
        from sklearn.mixture import GaussianMixture

        state, arrays = read_model(path, "MixtureLift")
        with reconstructing(path):
            params = dict(state["params"])
            params["components"] = tuple(params["components"])
            params["covariances"] = tuple(params["covariances"])
            est = cls(**params)
            labels = list(state["sensitive_labels"])
            pre = checked_preprocessor(state["preprocessor"])
            n_s, d = len(labels), pre.n_features_
            prior = checked_prior(path, arrays, n_s)
            n_comp, cov = state["selected"]
            if cov not in COVARIANCES or len(arrays) != 1 + 3 * n_s:
                raise ValueError("the stored mixtures do not match the labels")
            mixtures = []
            for k in range(n_s):
                w = check_array(path, arrays, f"{k}.weights", ndim=1, low=0.0)
                c = len(w)
                means = check_array(path, arrays, f"{k}.means", ndim=2)
                shape = {"spherical": (c,), "diag": (c, d), "full": (c, d, d)}[cov]
                chol = check_array(path, arrays, f"{k}.precisions_cholesky", ndim=len(shape))
                diag = chol if cov != "full" else np.diagonal(chol, axis1=1, axis2=2)
                if not (
                    c >= 1
                    and abs(float(w.sum()) - 1.0) <= 1e-9
                    and means.shape == (c, d)
                    and chol.shape == shape
                    and diag.min() > 0
                ):
                    raise ValueError(f"mixture {k} is inconsistent")
                gm = GaussianMixture(c, covariance_type=cov)
                gm.weights_, gm.means_, gm.precisions_cholesky_ = w, means, chol
                mixtures.append(gm)
            est.sensitive_labels_ = labels
            est.prior_ = prior
            est.preprocessor_ = pre
            est.n_components_, est.covariance_ = check_positive_int(n_comp, "n_components"), cov
            est.cv_log_loss_ = {}
            est.mixtures_ = mixtures
        return est
