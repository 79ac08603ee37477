"""The lift test of released cells.

A released cell's posterior is a convex combination of its tuples' posteriors, and lift privacy
asks every cell posterior to lie in the box

.. math:: e^{-\\varepsilon} p(s) \\le p(s \\mid y) \\le e^{\\varepsilon} p(s)

(two-sided, Hsu et al. Def. 1; on equivalence classes it is delta-disclosure privacy) or only
under its upper face (``positive``: enhanced beta-likeness with beta = e^epsilon - 1). Since the
box is convex, merging valid cells gives a valid cell.
"""

from __future__ import annotations

import hashlib

import numpy as np
from numpy.typing import NDArray

from ...exceptions import ValidationError
from ._counts import row_sums

__all__ = ["DISCLOSURES", "LiftBox"]

#: Two-sided lift privacy, or only an upper bound on the lift.
DISCLOSURES = ("both", "positive")
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def _row_any(flags: np.ndarray) -> np.ndarray:
    """``flags.any(-1)`` of a 2-D boolean array, column by column (far faster when narrow)."""
    if flags.ndim != 2 or flags.shape[1] > 16:
        return np.asarray(flags.any(-1))
    out = np.zeros(flags.shape[0], dtype=bool)
    for k in range(flags.shape[1]):
        out |= flags[:, k]
    return out


class LiftBox:
    """The lift-privacy test of cell counts, for every sensitive attribute and their joint tuple.

    Parameters
    ----------
    prior_counts : array (n_sensitive,)
        Joint sensitive counts of all records (the prior of the guarantee).
    marginals : list of int arrays
        Per attribute, the attribute code of each joint value (see
        :meth:`CountTable.marginals`).
    epsilon : float
        The lift-privacy level in nats.
    disclosure : {"both", "positive"}
        Two-sided lift privacy, or only an upper bound on the lift.
    confidence : float or None
        None: a cell is tested on its plug-in posterior. A level q in (0.5, 1): it must also pass
        with its credible bounds, the q-quantiles of the Beta posterior of every sensitive share
        (prior weight S/2 spread by the population shares, as in the held-out check), so that a
        small cell only passes with a margin that fresh records are likely to keep.
    """

    def __init__(
        self,
        prior_counts: FloatArray,
        marginals: list[IntArray],
        epsilon: float,
        disclosure: str,
        confidence: float | None = None,
    ) -> None:
        if confidence is not None and not 0.5 <= confidence < 1:
            raise ValidationError(f"`confidence` must be in [0.5, 1); got {confidence!r}.")
        self.confidence = confidence
        if disclosure not in DISCLOSURES:
            raise ValidationError(f"`disclosure` must be one of {DISCLOSURES}; got {disclosure!r}.")
        self.epsilon = float(epsilon)
        self.disclosure = disclosure
        n_joint = len(prior_counts)
        # projections: the joint values and each attribute (a single attribute: the joint only)
        mats = [np.eye(n_joint)]
        if len(marginals) > 1:
            for codes in marginals:
                m = np.zeros((n_joint, int(codes.max()) + 1))
                m[np.arange(n_joint), codes] = 1.0
                mats.append(m)
        self.projection = np.concatenate(mats, axis=1)
        self._identity = len(mats) == 1  # one attribute: projecting is the identity
        self.groups = np.concatenate([np.full(m.shape[1], i) for i, m in enumerate(mats)]).astype(
            np.int64
        )
        prior = prior_counts @ self.projection
        self.prior = prior / prior_counts.sum()
        self.hi = np.exp(self.epsilon) * self.prior
        self.lo = (
            np.exp(-self.epsilon) * self.prior if disclosure == "both" else np.zeros_like(prior)
        )
        group_size = np.bincount(self.groups).astype(float)
        self.alpha = 0.5 * group_size[self.groups] * self.prior  # per projected value
        # the box with the 1e-12 tolerance on the log-lift, for tests without logarithms
        tol = self.epsilon + 1e-12
        self._hi_tol = np.exp(tol) * self.prior
        self._lo_tol = np.exp(-tol) * self.prior if disclosure == "both" else None
        self._linear = bool((self.prior > 0).all())
        # what fixes :meth:`breaks` but the credible level: a memo of its masks keyed by this
        # may carry them across searches at other levels (:meth:`breaks` ``broken``/``passing``)
        digest = hashlib.blake2b(digest_size=16)
        for arr in (self.prior, self.hi, self.lo, self.alpha, self.projection):
            digest.update(np.ascontiguousarray(arr).tobytes())
        self.signature = (self.epsilon, self.disclosure, self.projection.shape, digest.digest())

    def bounds(self, cells: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Lower and upper credible bounds of every projected sensitive share of each cell."""
        from scipy.special import betaincinv

        a, b = self._beta(np.asarray(cells, dtype=float))
        q = float(self.confidence or 0.5)
        return betaincinv(a, b, 1.0 - q), betaincinv(a, b, q)

    def posterior(self, cells: FloatArray) -> FloatArray:
        """Each cell's projected sensitive shares (the prior for an empty cell), a new array.

        With one sensitive attribute the projection is the identity and is skipped (the same
        values: the held-out check scores arrays of millions of posterior draws here)."""
        cells = np.asarray(cells, dtype=float)
        proj = cells if self._identity else cells @ self.projection
        size = cells.sum(-1, keepdims=True)
        if (size > 0).all():
            return np.asarray(proj / size, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(size > 0, proj / np.where(size > 0, size, 1.0), self.prior)

    def violation(self, cells: FloatArray) -> FloatArray:
        """How far each cell's posteriors lie outside the box (0 for a valid cell)."""
        post = self.posterior(cells)
        excess = np.maximum(post - self.hi, 0.0) + np.maximum(self.lo - post, 0.0)
        if self.confidence is not None:
            low, high = self.bounds(cells)
            excess = excess + np.maximum(high - self.hi, 0.0) + np.maximum(self.lo - low, 0.0)
        return np.asarray(excess.sum(-1), dtype=float)

    def breaks(
        self,
        cells: FloatArray,
        broken: np.ndarray | None = None,
        passing: np.ndarray | None = None,
    ) -> np.ndarray:
        """Whether each cell breaks the guarantee (with a 1e-12 tolerance on the lift), and with
        a ``confidence`` q, whether its credible bounds leave the box.

        The bounds are not inverted: the q-quantile of a Beta(a, b) share exceeds ``hi`` exactly
        when its CDF at ``hi`` is below q (:func:`scipy.special.betainc`, far cheaper than its
        inverse); only the cells that pass on their plug-in posterior are tested, and the CDF is
        computed only where a sub-Gaussian tail bound of the Beta share leaves the answer open
        (the same answer, not an approximation).

        ``broken`` / ``passing``: cells already known to break / to pass (masks of this box at
        another credible level, or of the plug-in test), which are not tested again. The set
        of broken cells only grows with the level q: with the same a, b and box edge, a CDF
        below q1 (``betainc(a, b, hi) < q1``) is below every q2 > q1, and likewise above 1 - q1
        at the lower edge; the plug-in test is part of every level's. So a mask at a smaller
        level (or the plug-in one) may be given as ``broken`` and the complement of one at a
        larger level as ``passing``. Each cell's answer is computed from its own row only, and
        for cells of integer counts its projection (a sum of integers) is exact in any order,
        so the mask is then the one :meth:`breaks` computes on all cells."""
        cells = np.asarray(cells, dtype=float)
        if broken is None and passing is None:
            return self._breaks_all(cells)
        known = np.zeros(cells.shape[0], dtype=bool)
        out = np.zeros(cells.shape[0], dtype=bool)
        if broken is not None:
            out |= broken
            known |= broken
        if passing is not None:
            known |= passing
        todo = ~known
        if todo.any():
            out[todo] = self._breaks_all(cells[todo])
        return out

    def breaks_plugin(self, cells: FloatArray) -> np.ndarray:
        """:meth:`breaks` without the credible margin (the plug-in posterior alone): a subset of
        the cells :meth:`breaks` finds at any level."""
        cells = np.asarray(cells, dtype=float)
        return self._breaks_plugin(cells, row_sums(cells))

    def _breaks_all(self, cells: FloatArray) -> np.ndarray:
        """:meth:`breaks` of every cell."""
        size = row_sums(cells)
        out = self._breaks_plugin(cells, size)
        if self.confidence is None:
            return out
        from scipy.special import betainc

        check = ~out
        if not check.any():
            return out
        a, b = self._beta(cells[check], size[check])
        q = float(self.confidence)
        hi = np.broadcast_to(np.minimum(self.hi * (1 + 1e-12), 1.0), a.shape)
        lo = np.broadcast_to(self.lo * (1 - 1e-12), a.shape)
        # decided without a CDF: a Beta(a, b) share is sub-Gaussian with variance proxy at most
        # 1 / (4 (a + b + 1)) (Marchal & Arbel, Electron. Commun. Probab. 2017), so
        # P(share - mean >= t) <= exp(-2 (a + b + 1) t^2); where that is below 1 - q (with a
        # margin far above betainc's rounding) the bound cannot leave the box on that side
        mean, width = a / (a + b), 2.0 * (a + b + 1.0)
        tail = (1.0 - q) * (1.0 - 1e-6)
        high_safe = (hi > mean) & (np.exp(-width * (hi - mean) ** 2) < tail)
        low_safe = (lo <= 0) | ((lo < mean) & (np.exp(-width * (mean - lo) ** 2) < tail))
        high_out = np.zeros(a.shape, dtype=bool)
        low_out = np.zeros(a.shape, dtype=bool)
        todo = ~high_safe
        high_out[todo] = betainc(a[todo], b[todo], hi[todo]) < q
        todo = ~low_safe
        low_out[todo] = betainc(a[todo], b[todo], lo[todo]) > 1.0 - q
        out = out.copy()
        out[check] = _row_any(high_out | low_out)
        return out

    def _breaks_plugin(self, cells: FloatArray, size: FloatArray) -> np.ndarray:
        """``worst(cells) > epsilon + 1e-12`` without logarithms or divisions: a share x / n of
        a cell leaves the box when x > n p e^(epsilon + 1e-12) (or, two-sided, x < n p
        e^-(epsilon + 1e-12)); an empty cell (its posterior is the prior) never does.
        ``size``: the cells' sizes (:func:`row_sums`)."""
        if not self._linear:
            return np.asarray(self.worst(cells) > self.epsilon + 1e-12)
        proj = cells if self._identity else cells @ self.projection
        out = np.zeros(proj.shape[:-1], dtype=bool)
        for k in range(proj.shape[-1]):  # column by column: the same test, far faster
            out |= proj[..., k] > size * self._hi_tol[k]
            if self._lo_tol is not None:
                out |= proj[..., k] < size * self._lo_tol[k]
        return out

    def _beta(
        self, cells: FloatArray, size: FloatArray | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """The Beta posterior parameters of every projected sensitive share of each cell
        (``size``: the cells' sizes, when known)."""
        proj = cells @ self.projection
        size = (row_sums(cells) if size is None else size)[..., None]
        group_alpha = np.bincount(self.groups, weights=self.alpha)[self.groups]
        return proj + self.alpha, size - proj + (group_alpha - self.alpha)

    def _disclosed(self, cells: FloatArray) -> FloatArray:
        """|log-lift| (``both``) or log-lift (``positive``) of every projected sensitive value."""
        ll = self.posterior(cells)  # a new array: the log-lift is computed in it, in place
        with np.errstate(divide="ignore"):
            np.log(ll, out=ll)
        ll -= np.log(self.prior)
        if self.disclosure == "both":
            np.abs(ll, out=ll)
        return ll

    def worst(self, cells: FloatArray) -> FloatArray:
        """The cell's worst log-lift: max |log-lift| (``both``) or max log-lift (``positive``)."""
        return np.asarray(self._disclosed(cells).max(-1), dtype=float)

    def worst_by_group(self, cells: FloatArray) -> FloatArray:
        """Per cell and per guarantee (0: the joint tuple, then each attribute): worst log-lift."""
        val = self._disclosed(cells)
        n_groups = int(self.groups.max()) + 1
        return np.stack([val[..., self.groups == g].max(-1) for g in range(n_groups)], axis=-1)
