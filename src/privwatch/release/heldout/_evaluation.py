"""One release evaluated under the fitted tuple model (:mod:`._model`): cells' breach
probabilities, and draws of the breach share for the interval.

Per modelled value, a released cell's share is the records-weighted mean of its tuples'
shares; given the prior the tuples are independent, so the cell's posterior has their weighted
mean and variance, matched by a Beta (a cell of one tuple, without the unseen mass: the tuple's
posterior itself). The unseen mass joins the suppressed cell as a pseudo-tuple with the mean and
the variance of the average share of the tuples seen once (:meth:`_Evaluation._extra`; under
each replicate's prior for the interval). Several values: P_c = 1 - prod_v (1 - P_cv).

The interval's draws: per replicate of the prior (its family, G and p(s), drawn once per table
by the model), the cells not decided by a bound are re-evaluated, each draws I_c ~
Bernoulli(P_c); given the I_c, the breach share of cell masses W ~ Dirichlet(records) is exactly
Beta(records of breaking cells, records of the others) (the Dirichlet's aggregation property),
so one Beta variate per draw replaces a Gamma variate per cell and draw. Cells whose P_c is
within DECIDED of 0 (1) under the narrowest (widest) box any p(s) replicate gives are summed in
closed form: the cost grows with the undecided cells, not with cells x draws.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..cells import CountTable, LiftBox
from ._beta_match import (
    beta_of_cells,
    beta_outside,
    betas_of_cells,
    seen_once,
    unseen_share,
)
from ._model import HeldOutModel, ValueModel
from ._posterior import posteriors
from ._verdict import REPLICATES

__all__ = [
    "DECIDED",
    "Value",
    "prefetch_model",
    "value_bounds",
    "values_of",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: P_c below this (or above 1 minus it) counts as decided: no Bernoulli draw for the cell.
DECIDED = 1e-9
#: Most Bernoulli variates drawn at once (draws x undecided cells).
CHUNK = 4_000_000
#: Most undecided cells whose replicates are evaluated (a sample by size beyond it).
MAX_OPEN = 20_000

CellFigures = tuple[FloatArray, FloatArray, FloatArray, FloatArray]


@dataclass(frozen=True)
class Value:
    """One modelled sensitive value: its column of projected counts and its allowed interval."""

    column: int
    bounds: tuple[float, float]
    prior: float
    pair: int | None  # the other value of a two-valued attribute (its share is 1 - theta)


def value_bounds(box: LiftBox, prior: FloatArray) -> list[tuple[float, float]]:
    """The allowed interval of every modelled value (order of :func:`values_of`) when the
    projected p(s) is ``prior``."""
    hi = np.exp(box.epsilon) * prior
    lo = np.exp(-box.epsilon) * prior if box.disclosure == "both" else np.zeros_like(prior)
    out = []
    for g in range(int(box.groups.max()) + 1):
        cols = np.flatnonzero(box.groups == g)
        if len(cols) == 2:
            a, b = (int(c) for c in cols)
            out.append((float(max(lo[a], 1.0 - hi[b])), float(min(hi[a], 1.0 - lo[b]))))
        else:
            out += [(float(lo[c]), float(hi[c])) for c in cols]
    return out


def values_of(box: LiftBox) -> list[Value]:
    """The values to model: each group of projected values (the joint tuple, then each
    attribute); a two-valued group once, its box the intersection of both values' boxes."""
    cols: list[tuple[int, int | None]] = []
    for g in range(int(box.groups.max()) + 1):
        members = [int(c) for c in np.flatnonzero(box.groups == g)]
        cols += [(members[0], members[1])] if len(members) == 2 else [(c, None) for c in members]
    bounds = value_bounds(box, box.prior)
    return [
        Value(c, b, float(box.prior[c]), pair) for (c, pair), b in zip(cols, bounds, strict=True)
    ]


def prefetch_model(table: CountTable, box: LiftBox) -> None:
    """Start fitting the held-out model of ``table`` for the values of ``box``
    (:meth:`HeldOutModel.prefetch`, :meth:`HeldOutModel.of`'s model), with the
    :data:`~._verdict.REPLICATES` draws of its prior that the check's interval asks for, in the
    background: a later check of a release of ``table`` waits for it rather than fitting it."""
    model = HeldOutModel.of(table, box.projection)
    model.prefetch([(v.column, v.prior) for v in values_of(box)], REPLICATES)


#: Most memory (bytes) the replicates' posterior moments kept take, all models together
#: (:func:`_replicate_moments`; a model short of room drops the other models' first).
MOMENTS_BYTES = 128 * 2**20
_Moments = tuple[FloatArray, FloatArray, np.ndarray]
_MOMENTS: weakref.WeakKeyDictionary[HeldOutModel, dict[tuple[int, int, bytes], _Moments]] = (
    weakref.WeakKeyDictionary()
)
_MOMENTS_LOCK = threading.Lock()


def _replicate_moments(
    model: HeldOutModel, vm: ValueModel, cand: int, alphas: FloatArray, rows: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Posterior mean and variance (rows x priors) of the tuple ``rows`` of ``model`` under
    the priors ``alphas`` of the family ``cand`` of the value ``vm``
    (:func:`~._posterior.posteriors`, eta that family's).

    The held-out checks of one table (every release tried, at every margin and epsilon, for
    the frontier and the alternatives) ask for the moments of the same tuples under the same
    replicate priors: they depend on the tuple and the priors alone, not on the release or its
    box, so they are kept per model, value, family and priors and computed for the rows not
    asked before (like :meth:`ValueModel.out`), while they fit in :data:`MOMENTS_BYTES`.

    The same figures to the last bits: a row's moments are formed by BLAS products whose
    rounding depends on the row's place in its block (OpenBLAS's edge kernels), so a row
    computed among other rows than a call without this memo asks for can differ in its last
    bit; a row asked again while kept gets the bits it got first. Unchanged on the goldens,
    the census leakage.json and the 10^7 decision (checked when this was written)."""
    k, n = model.x[:, vm.column], model.n
    absent = [(0.0, 1.0)] * len(alphas)  # no edge: the moments alone
    key = (vm.column, cand, np.ascontiguousarray(alphas).tobytes())
    with _MOMENTS_LOCK:  # (rows computed twice by two threads get the same values)
        kept = _MOMENTS.setdefault(model, {})
        hit = kept.get(key)
        if hit is None:
            shape = (len(n), len(alphas))
            size = 2 * 8 * shape[0] * shape[1] + shape[0]
            if _moments_bytes() + size > MOMENTS_BYTES:  # room made from other tables' first
                for other in [m for m in _MOMENTS if m is not model]:
                    del _MOMENTS[other]
            if _moments_bytes() + size <= MOMENTS_BYTES:
                hit = (np.empty(shape), np.empty(shape), np.zeros(shape[0], dtype=bool))
                kept[key] = hit
    if hit is None:
        eta = _model_eta(vm, cand, rows)
        mean, var, _ = posteriors(alphas, k[rows], n[rows], eta, absent, model.grid_rows)
        return mean, var
    mean, var, known = hit
    todo = rows[~known[rows]]
    if len(todo):
        eta = _model_eta(vm, cand, todo)
        m, v, _ = posteriors(alphas, k[todo], n[todo], eta, absent, model.grid_rows)
        mean[todo], var[todo], known[todo] = m, v, True
    if len(rows) == len(n):  # every row, in order (rows are sorted and distinct): no copy
        views = mean.view(), var.view()
        for a in views:
            a.flags.writeable = False
        return views
    return mean[rows], var[rows]


def _moments_bytes() -> int:
    """Memory the kept moments of every model take (:data:`MOMENTS_BYTES` bounds it)."""
    return sum(
        a.nbytes + b.nbytes + c.nbytes for kept in _MOMENTS.values() for a, b, c in kept.values()
    )


def _model_eta(vm: ValueModel, cand: int, rows: IntArray) -> FloatArray:
    """The tuple ``rows``' eta under the family ``cand`` of ``vm`` fitted on all records."""
    return np.asarray(vm.full[cand].eta[rows], dtype=float)


class _Evaluation:
    """The cells of one release (cell of every tuple row, their number, and the all-``*`` cell
    with the mass of tuples never seen) under one table's model."""

    def __init__(
        self,
        model: HeldOutModel,
        cell_of: IntArray,
        n_cells: int,
        unseen: tuple[int, float],
    ) -> None:
        self.model = model
        self.cell_of = cell_of
        self.n_cells = n_cells
        self.unseen = unseen
        self.rows = np.flatnonzero(model.n > 0)
        n_tuples = np.bincount(cell_of[self.rows], minlength=n_cells)
        one = n_tuples == 1
        if unseen[1] > 0:
            one[unseen[0]] = False
        self.single = one  # cells whose posterior is their one tuple's

    def _extra(
        self, vm: ValueModel, once: tuple[FloatArray, FloatArray] | None = None
    ) -> tuple[int, float, float, float]:
        """The unseen pseudo-tuple: its cell and mass, and its share's mean and variance
        (:func:`unseen_share`); ``once``: the posterior means and variances of the tuples
        :func:`seen_once` under a replicate's prior (default the fitted prior's)."""
        if once is None:
            rows = seen_once(self.model.n)
            once = (vm.mean[rows], vm.var[rows])
        return (self.unseen[0], self.unseen[1], *unseen_share(*once))

    def point(self, vm: ValueModel, bounds: tuple[float, float], exact: bool = True) -> CellFigures:
        """The value's cell figures under its fitted prior (``exact``: one-tuple cells from
        their tuple's posterior; else every cell from its Beta). Every caller uses P_c only
        through 1 - P_c, so the Beta CDFs are skipped where P_c is negligible
        (:func:`beta_outside` with ``complement``)."""
        rows = self.rows
        c = self.cell_of[rows]
        a, b, size = beta_of_cells(
            vm.mean[rows], vm.var[rows], self.model.n[rows], c, self.n_cells, self._extra(vm)
        )
        p = beta_outside(a, b, bounds, complement=True)
        alone = rows[self.single[c]]
        if exact and len(alone):
            p[self.cell_of[alone]] = vm.out(self.model, bounds, alone)
        return p, size, a, b

    def undecided(
        self,
        fitted: list[ValueModel],
        box: LiftBox,
        priors: list[FloatArray],
        p_cell: FloatArray,
        size: FloatArray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Cells to draw (not decided under the narrowest and widest boxes of the p(s)
        replicates, by their Beta, or not decided the same way under every replicate of the
        prior: its family, G and p(s)), and cells surely breaking."""
        live = size > 0
        per = np.stack([value_bounds(box, p) for p in priors] + [value_bounds(box, box.prior)])
        narrow = zip(per[:, :, 0].max(0), per[:, :, 1].min(0), strict=True)
        wide = zip(per[:, :, 0].min(0), per[:, :, 1].max(0), strict=True)
        miss_narrow, miss_wide = np.ones(self.n_cells), np.ones(self.n_cells)
        for vm, nb, wb in zip(fitted, narrow, wide, strict=True):
            miss_narrow *= 1.0 - self.point(vm, (float(nb[0]), float(nb[1])), False)[0]
            miss_wide *= 1.0 - self.point(vm, (float(wb[0]), float(wb[1])), False)[0]
        sure = live & (1.0 - miss_wide >= 1.0 - DECIDED) & (p_cell >= 1.0 - DECIDED)
        open_ = live & ~sure & ((1.0 - miss_narrow > DECIDED) | (p_cell > DECIDED))
        rest = np.flatnonzero(live & ~open_)
        if priors and 0 < len(rest) <= MAX_OPEN:  # decided under the fitted G: also under each
            p_rep = self.replicates(fitted, box, priors, rest)  # replicate's G and p(s)?
            moved = ((p_rep > DECIDED) & (p_rep < 1.0 - DECIDED)).any(0)
            moved |= sure[rest] & (p_rep <= DECIDED).any(0)
            moved |= ~sure[rest] & (p_rep >= 1.0 - DECIDED).any(0)
            open_[rest[moved]], sure[rest[moved]] = True, False
        return open_, sure

    def replicates(
        self,
        fitted: list[ValueModel],
        box: LiftBox,
        priors: list[FloatArray],
        cells: IntArray,
    ) -> FloatArray:
        """P_c of the ``cells`` (replicates x cells) under each replicate's prior and p(s)."""
        n_rep = len(priors)
        bounds = [value_bounds(box, p) for p in priors]
        in_cells = np.zeros(self.n_cells, dtype=bool)
        in_cells[cells] = True
        rows = self.rows[in_cells[self.cell_of[self.rows]]]
        c = self.cell_of[rows]
        alone = self.single[c]
        n, m = self.model.n, self.model
        at = np.full(self.n_cells, -1, dtype=np.int64)  # each cell's position in ``cells``
        at[cells] = np.arange(len(cells))
        lone = at[c[alone]]
        # the tuples' mass outside the box is read for one-tuple cells only, and integrated
        # for their tuples alone; the means and variances, all that the other cells read, are
        # the kept ones (_replicate_moments: elementwise per row, the same bits)
        outside = len(lone) > 0
        out_alone = np.zeros((0, n_rep))
        miss = np.ones((n_rep, len(cells)))
        for j, vm in enumerate(fitted):
            k = m.x[:, vm.column]
            draws = m.draws(vm, n_rep)
            star = self.unseen[1] > 0 and bool(in_cells[self.unseen[0]])
            once = seen_once(self.model.n) if star else np.zeros(0, dtype=np.int64)
            for cand in sorted({d[0] for d in draws}):
                reps = [r for r, d in enumerate(draws) if d[0] == cand]
                alphas = np.stack([draws[r][1] for r in reps])
                b_r = [bounds[r][j] for r in reps]
                mean, var = _replicate_moments(m, vm, cand, alphas, rows)
                m1, v1 = _replicate_moments(m, vm, cand, alphas, once)
                if outside:  # the mass outside each replicate's box, of the one-tuple cells
                    ra = rows[alone]
                    eta = _model_eta(vm, cand, ra)
                    out_alone = posteriors(alphas, k[ra], n[ra], eta, b_r, m.grid_rows)[2]
                extras = [self._extra(vm, (m1[:, i], v1[:, i])) for i in range(len(reps))]
                a_c, b_c = betas_of_cells(mean, var, n[rows], c, self.n_cells, extras, cells)
                for i, r in enumerate(reps):
                    # the CDFs of the asked cells only (elementwise: the same values)
                    p = beta_outside(a_c[:, i], b_c[:, i], b_r[i], complement=True)
                    if outside:
                        p[lone] = out_alone[:, i]
                    miss[r] *= 1.0 - p
        return 1.0 - miss

    def draws(
        self,
        fitted: list[ValueModel],
        box: LiftBox,
        priors: list[FloatArray],
        cells: tuple[FloatArray, FloatArray, np.ndarray, np.ndarray],
        draws: int,
        rng: np.random.Generator,
    ) -> FloatArray:
        """Draws of the breach share (see the module docstring). Beyond MAX_OPEN undecided
        cells, the replicates are evaluated on a sample of them drawn by size, their shift
        from the fitted prior's P_c carried to all, and the breaking records drawn normal."""
        p_cell, size, open_, sure = cells
        live = size > 0
        s_sure = float(size[sure].sum())
        s_rest = float(size[live & ~open_ & ~sure].sum())
        idx = np.flatnonzero(open_)
        s_open, p0 = size[idx], p_cell[idx]
        per = -(-max(draws, 1) // max(len(priors), 1))
        if not len(idx) or not priors:
            return _share_draws(p0, s_open, s_sure, s_rest, max(draws, 1), rng)
        if len(idx) <= MAX_OPEN:
            p_rep = self.replicates(fitted, box, priors, idx)
            out = [_share_draws(p, s_open, s_sure, s_rest, per, rng) for p in p_rep]
            return np.concatenate(out)[:draws]
        pick = np.sort(rng.choice(len(idx), MAX_OPEN, p=s_open / s_open.sum()))
        shift = (self.replicates(fitted, box, priors, idx[pick]) - p0[pick]).mean(1)
        mass = float(s_open @ p0) + shift * float(s_open.sum())
        sd = float(np.sqrt((s_open**2 * p0 * (1 - p0)).sum()))
        out = []
        for r in range(len(priors)):
            hit = np.clip(rng.normal(mass[r], sd, per), 0.0, float(s_open.sum()))
            out.append(_beta_share(hit + s_sure, float(s_open.sum()) - hit + s_rest, rng))
        return np.concatenate(out)[:draws]


def _share_draws(
    p_open: FloatArray,
    s_open: FloatArray,
    s_sure: float,
    s_rest: float,
    per: int,
    rng: np.random.Generator,
) -> FloatArray:
    """``per`` draws of the breach share: I_c ~ Bernoulli(p_open) per undecided cell, then
    Beta(records breaking, records not) (Dirichlet aggregation)."""
    hit = np.zeros(per)
    step = max(1, CHUNK // max(len(p_open), 1))
    for s in range(0, per, step):
        m = min(step, per - s)
        hit[s : s + m] = (rng.random((m, len(p_open))) < p_open) @ s_open
    return _beta_share(hit + s_sure, s_open.sum() - hit + s_rest, rng)


def _beta_share(a: FloatArray, b: FloatArray, rng: np.random.Generator) -> FloatArray:
    """Beta(a, b) draws; 0 where a = 0 and 1 where b = 0."""
    share = np.where(a <= 0, 0.0, np.where(b <= 0, 1.0, 0.5))
    both = (a > 0) & (b > 0)
    share[both] = rng.beta(a[both], b[both])
    return np.asarray(share, dtype=float)
