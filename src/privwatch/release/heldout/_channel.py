r"""The held-out check of a randomized release: released symbols that mix tuples at random.

A generalisation puts each tuple in one cell; a randomized release sends tuple x to symbol y
with probability :math:`w[x, y]` (a fixed channel: every other tuple to its own symbol, a tuple
never seen to ``*``). Symbol y's population mass is :math:`W_y = \sum_x W_x w[x, y]` and its
posterior

.. math:: \theta_y = \frac{\sum_x n_x w[x, y]\, \theta_x}{\sum_x n_x w[x, y]},

the channel-weighted mean of its tuples' shares. The breach share is, as for cells,
:math:`B = \sum_y W_y 1[\theta_y \notin \text{the lift box}]`. Under the table's tuple model
(:class:`~._model.HeldOutModel`, the same empirical-Bayes prior as every held-out check) the
tuples' shares are independent given the prior, so :math:`P(\theta_y \notin \text{box})`
is read off :data:`SHARE_DRAWS` joint draws of the tuples' shares from their posteriors on
the prior's grid (each grid point's mass spread uniformly over its cell), each draw giving
every symbol's weighted mean (a symbol of one tuple: the tuple's posterior exactly); the mass
of tuples never seen (Good-Turing) joins ``*`` with a share drawn from the Beta of the
singletons' average share (its mean and variance, as for cells). A Beta matching
the mean :math:`\sum_x n_x w_{xy} m_x / n_y` and variance
:math:`\sum_x n_x^2 w_{xy}^2 v_x / n_y^2` gives the worst log-lift's interval only: where a
tuple's posterior has two modes (a rare value's ordinary share, or a planted one ten times
it) the matched Beta is J-shaped and puts mass near 0 that no mixture of those tuples has,
so symbols far inside the box's lower edge were counted half breaking (BENCHMARKS.md, #41
item 6, fourth pass). The interval draws, as :func:`~._breach.estimate_breach`,
the prior family, G and p(s) (:data:`~._verdict.REPLICATES` replicates), each symbol breaking
with its probability, and the symbol masses from their Dirichlet: :data:`~._verdict.DRAWS`
draws, 2.5 % and 97.5 % quantiles. Symbols that share a tuple break together or not (their
shares are positively correlated through it; drawn independently, the interval was too narrow
on both sides: BENCHMARKS.md, #41 item 6, seventh session): a symbol of several tuples, and a
one-tuple symbol whose tuple also feeds one, is drawn in each Monte Carlo draw from one column
of the same SHARE_DRAWS joint draws of the tuples' shares (per replicate); the other symbols
are independent Bernoulli draws of their P(breaks).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.special import expit

from ..cells import CountTable, LiftBox
from ._beta_match import beta_outside, seen_once, unseen_share
from ._breach import GAP_NOTE, HeldOut, _unseen_mass, _worst, gap_upper
from ._evaluation import DECIDED, _beta_share, value_bounds, values_of
from ._model import HeldOutModel, ValueModel
from ._posterior import posteriors
from ._prior import GRID, STEP, grid_log_likelihood, log_prior, stratum_of
from ._verdict import DRAWS, REPLICATES

__all__ = ["estimate_channel_breach", "tuple_breach"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: Joint draws of the tuples' shares that give a symbol of several tuples its P(breaks), and
#: the seed of those draws (the figures are a function of the table and the channel).
SHARE_DRAWS = 400
SHARE_SEED = 20_261_127


def _beta(
    n_c: FloatArray, m_c: FloatArray, v_c: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    safe = np.maximum(n_c, 1e-300)
    m = np.clip(m_c / safe, 1e-12, 1 - 1e-12)
    v = np.clip(v_c / safe / safe, 1e-300, m * (1 - m) * (1 - 1e-9))
    phi = m * (1 - m) / v - 1.0
    return m * phi, (1 - m) * phi, n_c


class _Symbols:
    """The symbols of one channel under one table's model."""

    def __init__(self, model: HeldOutModel, weights: sparse.csr_array, star: int) -> None:
        self.model = model
        self.rows = np.flatnonzero(model.n > 0)
        w = sparse.csc_array(weights[self.rows])
        self.w, self.w2 = w, w.power(2)
        self.star = star
        self.unseen = _unseen_mass(model.n) * float(model.n.sum())
        n_in = np.diff(w.indptr)
        self.single = n_in == 1
        if self.unseen > 0:
            self.single[star] = False
        lone = np.flatnonzero(self.single)
        self.lone_row = self.rows[w.indices[w.indptr[lone]]]
        self.lone = lone
        self.multi = np.flatnonzero(~self.single & (n_in > 0))
        wm = sparse.csr_array(w[:, self.multi])
        self.mixed = np.flatnonzero(np.diff(wm.indptr) > 0)  # positions in rows
        self.w_multi = sparse.csr_array(wm[self.mixed])
        # one-tuple symbols whose tuple also feeds a symbol of several: drawn jointly with them
        at = np.full(len(self.rows), -1, dtype=np.int64)
        at[self.mixed] = np.arange(len(self.mixed))
        lone_at = at[w.indices[w.indptr[lone]]] if len(lone) else np.zeros(0, dtype=np.int64)
        self.lone_joint = lone[lone_at >= 0]
        self.lone_joint_at = lone_at[lone_at >= 0]
        #: the symbols drawn jointly (rows of :meth:`joint_outside`'s matrix)
        self.joint = np.concatenate([self.multi, self.lone_joint]).astype(np.int64)

    def mixed_outside(
        self, vm: ValueModel, alpha: FloatArray, eta: FloatArray, bounds: tuple[float, float]
    ) -> FloatArray:
        """P(share outside ``bounds``) of the symbols of several tuples (``self.multi``), from
        SHARE_DRAWS joint draws of their tuples' shares under the prior ``alpha`` (module
        docstring); ``eta`` of the tuple rows ``self.rows``."""
        if not len(self.multi):
            return np.zeros(0)
        return np.asarray(self.joint_outside(vm, alpha, eta, bounds)[: len(self.multi)].mean(1))

    def joint_outside(
        self, vm: ValueModel, alpha: FloatArray, eta: FloatArray, bounds: tuple[float, float]
    ) -> NDArray[np.bool_]:
        """Per joint draw (columns, SHARE_DRAWS), whether each symbol of :attr:`joint` (rows:
        those of several tuples, then the one-tuple symbols of a tuple they share) has its
        share outside ``bounds``."""
        if not len(self.multi):
            return np.zeros((0, SHARE_DRAWS), dtype=bool)
        m = self.model
        pos = self.mixed
        rows = self.rows[pos]
        theta = _tuple_share_draws(alpha, m.x[rows, vm.column], m.n[rows], eta[pos], vm.column)
        n = m.n[rows]
        n_c = np.asarray(self.w_multi.T @ n, dtype=float)
        num = np.asarray(self.w_multi.T @ (n[:, None] * theta), dtype=float)
        at_star = np.flatnonzero(self.multi == self.star)
        if len(at_star) and self.unseen > 0:
            n_c[at_star] += self.unseen
            num[at_star] += self.unseen * _unseen_share_draws(self._extra_moments, vm.column)
        share = np.concatenate([num / np.maximum(n_c, 1e-300)[:, None], theta[self.lone_joint_at]])
        lo, hi = bounds
        return np.asarray((share < lo) | (share > hi), dtype=bool)

    def _extra(self, mean: FloatArray, var: FloatArray) -> tuple[float, float]:
        """The unseen pseudo-tuple's share (:func:`~._evaluation.unseen_share`, as for cells)
        from the tuple rows' posterior means and variances."""
        rows = seen_once(self.model.n)
        return unseen_share(mean[rows], var[rows])

    def beta(self, mean: FloatArray, var: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Beta (a, b) of every symbol and its records, from the tuples' (rows') moments."""
        n = self.model.n[self.rows]
        n_c = np.asarray(self.w.T @ n, dtype=float)
        m_c = np.asarray(self.w.T @ (n * mean), dtype=float)
        v_c = np.asarray(self.w2.T @ (n**2 * var), dtype=float)
        n_c[self.star] += self.unseen
        m_c[self.star] += self.unseen * self._extra_moments[0]
        v_c[self.star] += self.unseen**2 * self._extra_moments[1]
        return _beta(n_c, m_c, v_c)

    def point(self, vm: ValueModel, bounds: tuple[float, float]) -> tuple[FloatArray, ...]:
        self._extra_moments = self._extra(vm.mean, vm.var)
        a, b, size = self.beta(vm.mean[self.rows], vm.var[self.rows])
        p = beta_outside(a, b, bounds)
        f = vm.fitted
        p[self.multi] = self.mixed_outside(vm, f.alpha, f.eta[self.rows], bounds)
        if len(self.lone):
            p[self.lone] = vm.out(self.model, bounds, self.lone_row)
        return p, size, a, b

    def replicates(
        self, fitted: list[ValueModel], box: LiftBox, priors: list[FloatArray]
    ) -> tuple[FloatArray, NDArray[np.bool_]]:
        """P(symbol breaks) under each replicate of the prior and p(s) (replicates x symbols),
        and whether the symbols of :attr:`joint` break in each joint draw (replicates x joint
        symbols x SHARE_DRAWS; every modelled value)."""
        m, rows = self.model, self.rows
        bounds = [value_bounds(box, p) for p in priors]
        n_sym = self.w.shape[1]
        miss = np.ones((len(priors), n_sym))
        kept = np.ones((len(priors), len(self.joint), SHARE_DRAWS), dtype=bool)
        lone_pos = np.searchsorted(rows, self.lone_row)
        for j, vm in enumerate(fitted):
            k = m.x[:, vm.column]
            draws = m.draws(vm, len(priors))
            for cand in sorted({d[0] for d in draws}):
                reps = [r for r, d in enumerate(draws) if d[0] == cand]
                eta = vm.full[cand].eta[rows]
                alphas = np.stack([draws[r][1] for r in reps])
                b_r = [bounds[r][j] for r in reps]
                mean, var, out = posteriors(alphas, k[rows], m.n[rows], eta, b_r, m.grid_rows)
                for i, r in enumerate(reps):
                    self._extra_moments = self._extra_of_rows(mean[:, i], var[:, i])
                    a, b, _ = self.beta(mean[:, i], var[:, i])
                    p = beta_outside(a, b, b_r[i])
                    joint = self.joint_outside(vm, alphas[i], eta, b_r[i])
                    kept[r] &= ~joint
                    p[self.multi] = joint[: len(self.multi)].mean(1)
                    p[self.lone] = out[lone_pos, i]
                    miss[r] *= 1.0 - p
        return 1.0 - miss, ~kept

    def _extra_of_rows(self, mean_rows: FloatArray, var_rows: FloatArray) -> tuple[float, float]:
        mean, var = np.zeros(len(self.model.n)), np.zeros(len(self.model.n))
        mean[self.rows], var[self.rows] = mean_rows, var_rows
        return self._extra(mean, var)


def _unseen_share_draws(moments: tuple[float, float], column: int) -> FloatArray:
    """SHARE_DRAWS draws of the unseen pseudo-tuple's share: the Beta of its mean and variance
    (its mean alone where the variance is 0); seeded by SHARE_SEED and ``column``."""
    mean, var = moments
    m = min(max(mean, 1e-12), 1 - 1e-12)
    if var <= 0:
        return np.full(SHARE_DRAWS, m)
    phi = m * (1 - m) / min(var, m * (1 - m) * (1 - 1e-9)) - 1.0
    rng = np.random.default_rng([SHARE_SEED, column, 1])
    return np.asarray(rng.beta(m * phi, (1 - m) * phi, SHARE_DRAWS), dtype=float)


def _tuple_share_draws(
    alpha: FloatArray, k: FloatArray, n: FloatArray, eta: FloatArray, column: int
) -> FloatArray:
    """SHARE_DRAWS draws (rows x draws) of each tuple's share from its posterior on GRID under
    the G of its size stratum (``alpha``: :attr:`~._prior.Fitted.alpha`), each grid point's
    mass spread uniformly over its cell; the generator is seeded by SHARE_SEED and ``column``."""
    rng = np.random.default_rng([SHARE_SEED, column])
    post = np.empty((len(k), len(GRID)))
    stratum = stratum_of(n)
    for s in np.unique(stratum).tolist():
        idx = np.flatnonzero(stratum == s)
        ll = grid_log_likelihood(k[idx], n[idx], eta[idx])
        ll += log_prior(alpha[1 + s])[None, :]
        ll -= ll.max(1, keepdims=True)
        post[idx] = np.exp(ll)
    cdf = np.cumsum(post, 1)
    cdf /= cdf[:, -1:]
    u = rng.random((len(k), SHARE_DRAWS))
    # inverse CDF of every row at once: row i's CDF shifted to (i, i + 1], one sorted array
    shift = np.arange(len(k), dtype=float)[:, None]
    flat = (cdf + shift).ravel()
    idx = np.searchsorted(flat, u + shift, side="left") - shift.astype(np.int64) * len(GRID)
    r = GRID[np.clip(idx, 0, len(GRID) - 1)] + (rng.random(u.shape) - 0.5) * STEP
    return np.asarray(expit(eta[:, None] + r), dtype=float)


def estimate_channel_breach(
    table: CountTable,
    box: LiftBox,
    weights: sparse.sparray | FloatArray,
    star: int,
    *,
    draws: int = DRAWS,
    replicates: int = REPLICATES,
    rng: np.random.Generator,
    model: HeldOutModel | None = None,
) -> HeldOut:
    """The held-out figures of a randomized release (module docstring).

    ``weights``: ``w[tuple row, symbol]``, each row of the table a probability vector over the
    symbols (rows of unseen tuples may be anything); ``star``: the symbol ``*`` (it also takes
    the mass of tuples never seen). The figures and the verdict have the meaning of
    :class:`~._breach.HeldOut` (``breach_probability_plugin`` and ``max_log_lift_plugin`` are
    NaN: there are no fold releases). ``model``: the table's fitted tuple model (default the
    cached one of ``table``)."""
    w = sparse.csr_array(weights)
    model = HeldOutModel.of(table, box.projection) if model is None else model
    sym = _Symbols(model, w, star)
    values = values_of(box)
    fitted = model.values([(v.column, v.prior) for v in values])
    per_value = [sym.point(vm, v.bounds) for v, vm in zip(values, fitted, strict=True)]
    p_sym = 1.0 - np.prod([1.0 - r[0] for r in per_value], axis=0)
    size = per_value[0][1]
    live = size > 0
    estimate = float((size * p_sym)[live].sum() / size[live].sum())
    priors = [p @ box.projection for p in model.prior_draws(replicates)]
    if priors:
        p_rep, joint = sym.replicates(fitted, box, priors)
        sample = _draws(p_rep, size, draws, rng, (sym.joint, joint))
    else:
        none = (np.zeros(0, dtype=np.int64), np.zeros((1, 0, SHARE_DRAWS), dtype=bool))
        sample = _draws(p_sym[None], size, draws, rng, none)
    lo, hi = (float(np.quantile(sample, q, method="inverted_cdf")) for q in (0.025, 0.975))
    lone = (sym.lone, sym.lone_row)
    p_values = [r[0] for r in per_value]
    unseen = (sym.star, sym.unseen)
    gap_hi = gap_upper(model, values, fitted, p_values, size, lone, draws, rng, unseen)
    trimmed = [(p[live], s[live], a[live], b[live]) for p, s, a, b in per_value]
    worst, worst_ci = _worst(values, trimmed, box)
    return HeldOut(
        folds=table.counts.shape[2],
        n_records=table.n_records,
        breach_probability=estimate,
        breach_probability_ci=(min(lo, estimate), max(hi, estimate, gap_hi or 0.0)),
        breach_probability_plugin=float("nan"),
        max_log_lift=worst,
        max_log_lift_ci=worst_ci,
        max_log_lift_plugin=float("nan"),
        interval=(
            "95 % interval: symbols breaking drawn from their posteriors (channel-weighted "
            "mixtures of the tuples' posteriors under an empirical-Bayes prior refitted on "
            "bootstrap weights), symbol masses Dirichlet(records)"
        )
        + ("" if gap_hi is None else GAP_NOTE),
        unseen_share=sym.unseen / float(size[live].sum()),
        undecided_cells=int(((p_sym > DECIDED) & (p_sym < 1 - DECIDED) & live).sum()),
    )


def _draws(
    p_rep: FloatArray,
    size: FloatArray,
    draws: int,
    rng: np.random.Generator,
    joint: tuple[IntArray, NDArray[np.bool_]],
) -> FloatArray:
    """Draws of the breach share: per replicate, the symbols drawn jointly (``joint``: their
    indices, and per replicate whether each breaks in each joint draw) from one random joint
    draw each, of the others those decided (P within DECIDED of 0 or 1) summed, the rest
    Bernoulli; then the Beta of the Dirichlet's aggregation."""
    live = size > 0
    idx, breaks = joint
    free = live.copy()
    free[idx] = False
    s_joint = size[idx]
    per = -(-max(draws, 1) // len(p_rep))
    out = []
    for r, p in enumerate(p_rep):
        sure = free & (p >= 1 - DECIDED)
        open_ = free & ~sure & (p > DECIDED)
        rest = float(size[free & ~sure & ~open_].sum())
        hit = np.zeros(per)
        if len(idx):
            hit = s_joint @ breaks[r][:, rng.integers(0, breaks.shape[2], per)]
        s_open = size[open_]
        if open_.any():
            hit = hit + (rng.random((per, len(s_open))) < p[open_]) @ s_open
        a = hit + float(size[sure].sum())
        b = float(s_joint.sum() + s_open.sum()) - hit + rest
        out.append(_beta_share(a, b, rng))
    return np.concatenate(out)[:draws]


def tuple_breach(table: CountTable, box: LiftBox, model: HeldOutModel | None = None) -> FloatArray:
    """Per tuple row, the posterior probability that its own share lies outside the lift box
    (every modelled value; 0 for rows without records): what releasing the tuple as itself
    adds to the held-out breach share, per record."""
    model = HeldOutModel.of(table, box.projection) if model is None else model
    rows = np.flatnonzero(model.n > 0)
    miss = np.ones(len(model.n))
    for v in values_of(box):
        vm = model.value(v.column, v.prior)
        miss[rows] *= 1.0 - vm.out(model, v.bounds, rows)
    out = 1.0 - miss
    out[model.n <= 0] = 0.0
    return out
