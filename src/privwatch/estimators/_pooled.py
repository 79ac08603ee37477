r"""A pooled log-lift: log-linear pooling of several families' posteriors, weights chosen by
cross-validated log-loss (the super learner, also called stacking; issue #16).

Not to be confused with *stacked training* (:mod:`~privwatch.estimators._stacking`): networks
trained side by side as one program. Here, fitted families' posteriors are pooled.

Given out-of-fold log-posteriors :math:`L_f(s|x_i) = \log \hat P_f(s|x_i)` of the candidate
families f (every record scored by a model that did not see it), the weights solve

.. math::

    \hat w = \arg\min_{w \ge 0,\ \sum_f w_f = 1}\ -\frac1n \sum_i
        \Big[\sum_f w_f L_f(s_i|x_i) - \log \sum_{s} e^{\sum_f w_f L_f(s|x_i)}\Big],

the log-loss (a proper score) of the pooled posterior
:math:`\hat P(s|x) \propto \prod_f \hat P_f(s|x)^{w_f}` (geometric / log-linear opinion pool,
Genest & Zidek 1986, *Combining probability distributions*, Statist. Sci. 1). The problem is
convex in w. Choosing the combination by cross-validated loss is the super learner (van der Laan,
Polley & Hubbard 2007, *Super learner*, SAGMB 6, with the log-loss as its loss); it does
asymptotically as well as the best such combination, so at least as well as the best single
family. Pooled log-posteriors mean pooled log-lifts: the stacked log-lift is the weighted mean of
the members' log-lifts, renormalised so that :math:`\sum_s P(s) e^{i(s,x)} = 1`.

The members' disagreement, :math:`\sum_f w_f (\hat i_f - \bar i)^2` with
:math:`\bar i = \sum_f w_f \hat i_f`, is the between-model part of the law of total variance of a
model average (Hoeting, Madigan, Raftery & Volinsky 1999, *Bayesian model averaging: a tutorial*,
Statist. Sci. 14, eq. 2-3; the same mixture variance as deep ensembles, Lakshminarayanan, Pritzel
& Blundell 2017, NeurIPS), with the stacking weights in place of posterior model probabilities:
:meth:`PooledLift.model_variance` returns it and the intervals of :func:`cross_fit` add it to the
resampling variance, so that they carry the families' disagreement (model error) and not only the
sampling variance of one family.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import log_softmax

from .._base import check_is_fitted
from .._rng import RNGLike, check_rng
from ..exceptions import ValidationError
from ._base import LiftEstimator
from ._lift import FloatArray, normalize_log_lift
from ._preprocess import as_frame

__all__ = ["MIN_WEIGHT", "PooledLift", "pooling_weights"]

#: Members whose stacking weight is below this are dropped (and the rest renormalised): they
#: change the pooled posterior by less than the validation noise and cost a fit each.
MIN_WEIGHT = 0.02


def pooling_weights(log_posteriors: list[FloatArray], codes: NDArray[np.int64]) -> FloatArray:
    """Simplex weights minimising the log-loss of the log-linear pool of ``log_posteriors``
    (each records x sensitive values, out of fold) for the true codes (see the module doc)."""
    stack = np.stack([np.asarray(v, dtype=np.float64) for v in log_posteriors])  # f x n x S
    n_f, n = stack.shape[0], stack.shape[1]
    if n_f == 1:
        return np.ones(1)
    rows = np.arange(n)
    own = stack[:, rows, codes]  # f x n

    def loss(w: FloatArray) -> tuple[float, FloatArray]:
        pooled = log_softmax(np.tensordot(w, stack, axes=1), axis=1)  # n x S
        post = np.exp(pooled)
        value = -float(pooled[rows, codes].mean())
        grad = -(own - np.einsum("fns,ns->fn", stack, post)).mean(axis=1)
        return value, np.asarray(grad, dtype=np.float64)

    res = minimize(
        loss,
        np.full(n_f, 1.0 / n_f),
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n_f,
        constraints=[{"type": "eq", "fun": lambda w: float(w.sum() - 1.0)}],
        options={"ftol": 1e-10, "maxiter": 200},
    )
    w = np.clip(np.asarray(res.x, dtype=np.float64), 0.0, None)
    return np.asarray(w / w.sum(), dtype=np.float64)


class PooledLift(LiftEstimator):
    r"""Log-lift of a weighted log-linear pool of fitted log-lift models (see the module doc).

    .. math:: \hat i(s, x) = \sum_f w_f\, \hat i_f(s, x) - \log \sum_{s'} \hat P(s')\,
        e^{\sum_f w_f \hat i_f(s', x)}

    ``fit`` refits every estimator of ``estimators`` (each with its own seed from ``rng``) and
    keeps ``weights``; :class:`AutoLift` builds one with weights chosen by cross-validated
    log-loss. :meth:`model_variance` is the members' weighted disagreement.

    Examples
    --------
    >>> from privwatch.estimators import PosteriorLift
    >>> from privwatch.estimators._pooled import PooledLift
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 1000)
    >>> x = rng.normal(s[:, None] * 1.0, 1.0, size=(1000, 2))
    >>> members = (PosteriorLift(C=1.0), PosteriorLift(family="gradient_boosting"))
    >>> est = PooledLift(estimators=members, weights=(0.7, 0.3), rng=0).fit(x, s)
    >>> bool(np.allclose(np.exp(est.log_lift(x[:5])) @ est.prior_, 1.0))
    True
    """

    def __init__(
        self,
        *,
        estimators: tuple[LiftEstimator, ...] = (),
        weights: tuple[float, ...] = (),
        names: tuple[str, ...] = (),
        rng: RNGLike = None,
    ) -> None:
        self.estimators = estimators
        self.weights = weights
        self.names = names
        self.rng = rng

    def _check(self) -> FloatArray:
        w = np.asarray(self.weights, dtype=np.float64)
        if not self.estimators or w.shape != (len(self.estimators),):
            raise ValidationError(
                f"`weights` must hold one weight per estimator ({len(self.estimators)}, at least "
                f"one); got {self.weights!r}."
            )
        if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
            raise ValidationError(
                f"`weights` must be non-negative finite numbers with a positive sum; "
                f"got {self.weights!r}."
            )
        return np.asarray(w / w.sum(), dtype=np.float64)

    def fit(self, X: pd.DataFrame | ArrayLike, s: ArrayLike) -> PooledLift:
        """Refit every member on ``X`` / ``s`` and keep the given weights."""
        from sklearn.base import clone

        w = self._check()
        frame = as_frame(X)
        self._fit_sensitive(s, len(frame))
        seeds = check_rng(self.rng).integers(0, 2**31 - 1, size=len(self.estimators))
        members = []
        for est, seed in zip(self.estimators, seeds, strict=True):
            member = clone(est)
            if "rng" in member.get_params():
                member.set_params(rng=int(seed))
            members.append(member.fit(frame, s))
        self._set_members(members, w)
        return self

    @classmethod
    def from_fitted(
        cls, members: list[LiftEstimator], weights: FloatArray, names: tuple[str, ...]
    ) -> PooledLift:
        """A fitted stack of already fitted ``members`` (same records and labels)."""
        frozen = tuple(m.frozen_estimator() for m in members)
        est = cls(estimators=frozen, weights=tuple(float(v) for v in weights), names=names)
        est._set_members(members, est._check())
        return est

    def _set_members(self, members: list[LiftEstimator], w: FloatArray) -> None:
        labels = list(members[0].sensitive_labels_)
        if any(list(m.sensitive_labels_) != labels for m in members):  # pragma: no cover
            raise ValidationError("the stacked members must share their sensitive labels.")
        self.sensitive_labels_ = labels
        self.prior_ = np.asarray(members[0].prior_, dtype=np.float64)
        self.members_ = members
        self.weights_ = w

    def _member_log_lifts(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        check_is_fitted(self, "members_")
        return np.stack([m.log_lift(X) for m in self.members_])

    def log_lift(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        """Pooled log-lift (records x sorted sensitive values)."""
        pooled = np.tensordot(self.weights_, self._member_log_lifts(X), axes=1)
        return normalize_log_lift(np.asarray(pooled, dtype=np.float64), self.prior_)

    def model_variance(self, X: pd.DataFrame | ArrayLike) -> FloatArray:
        r"""Between-member variance :math:`\sum_f w_f (\hat i_f - \bar i)^2` of each log-lift."""
        draws = self._member_log_lifts(X)
        mean = np.tensordot(self.weights_, draws, axes=1)
        var = np.tensordot(self.weights_, (draws - mean[None]) ** 2, axes=1)
        return np.asarray(var, dtype=np.float64)

    def frozen_estimator(self) -> LiftEstimator:
        """The same members, each with its selected regularisation, and the same weights."""
        check_is_fitted(self, "members_")
        return PooledLift(
            estimators=tuple(m.frozen_estimator() for m in self.members_),
            weights=tuple(float(v) for v in self.weights_),
            names=self.names,
            rng=self.rng,
        )

    def describe(self) -> str:
        """``"name weight + ..."``, heaviest first."""
        names = self.names or tuple(type(m).__name__ for m in self.members_)
        order = np.argsort(-self.weights_)
        return " + ".join(f"{names[k]} {self.weights_[k]:.2f}" for k in order)
