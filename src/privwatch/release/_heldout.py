"""The held-out check: how much of the population falls in a released cell that breaks epsilon?

**What is estimated.** The published release maps every observed tuple to a cell (a tuple never
seen in the data goes to the suppressed cell, ``*`` in every column, as the saved mechanism's
``apply`` does). In the population each cell c has a mass W_c and a true posterior p(s | c); the
*breach share* is

.. math:: B = \\sum_c W_c \\, 1[\\, p(s \\mid c) \\notin \\text{the lift box} \\,],

the share of the population whose released cell breaks epsilon (two-sided or one-sided, as the
guarantee). ``breach_probability`` estimates B; ``breach_probability_ci`` is a 95 % interval.

**How.** A cell is a mixture of observed tuples, so the estimate models the tuples' p(s | x)
(:mod:`privwatch.release._heldout_eb`): per sensitive value, logit p(v | x) = eta_x + r_x, with
eta_x ridge-penalised main effects of the observed columns and r_x ~ G a nonparametric prior
(NPMLE on a grid) fitted on every tuple. The search chose the released cells by their counts,
but the prior is fitted on all tuples, which the search did not select, so each cell's
posterior is free of the winner's curse. Then

- ``P_c`` = posterior probability that cell c breaks epsilon: per value, the mass of the cell's
  posterior outside the box (a one-tuple cell: the tuple's grid posterior; a larger cell: a Beta
  matching the mean and variance of the weighted mean of its tuples, independent given the
  prior); several values: 1 - prod_v (1 - P_cv), between the bounds max_v P_cv and sum_v P_cv
  (for two values of one attribute the two events are one, computed once exactly);
- ``breach_probability`` = sum_c W_c P_c / sum_c W_c, with W_c the cell's records, the
  suppressed cell also holding the mass of tuples never seen (Good-Turing: the share of records
  whose tuple occurs once);
- the interval: quantiles of sum_c W_c I_c with I_c ~ Bernoulli(P_c) independent, W ~
  Dirichlet(records) (Bayesian bootstrap) and G refitted under Bayesian-bootstrap weights of the
  tuples (``replicates`` times) so that the prior's own uncertainty is in it. Bernoulli draws are
  made only for cells whose P_c is neither below 1e-9 nor above 1 - 1e-9; the others are summed
  in closed form, so the cost grows with the undecided cells, not cells x draws.

**Where the folds come in.** K-fold cross-fitting: the release is searched on K-1 folds and the
held-out fold is released through it. The held-out counts of those cells choose the model's
ridge penalty (their beta-binomial predictive score under a model fitted on the K-1 folds) and
give the plug-in figures ``breach_probability_plugin`` (the share of held-out records whose
cell's held-out posterior breaks epsilon: pessimistic, a cell of three records shows zeros) and
``max_log_lift_plugin``. ``max_log_lift`` is the worst log-lift of a released cell at its
posterior mean, ``max_log_lift_ci`` that cell's 95 % posterior interval.

**Assumptions.** The records are independent draws from the population; given the prior the
tuples' shares are independent (shared values enter through the main effects); p(s) is the
data's (its error is ignored). The figures depend on ``rng`` only. :meth:`HeldOut.verdict`
turns them into MET (the interval's upper end within the tolerance), a confirmed breach (its
lower end above it) or too thin evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import betaincinv

from . import _heldout_eb as eb
from ._cells import CountTable, LiftBox, cell_counts
from ._search import Plan, ReleaseSpace, release_cells

__all__ = ["HeldOut", "held_out_check"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: P_c below this (or above 1 minus it) counts as decided: no Bernoulli draw for the cell.
DECIDED = 1e-9


@dataclass(frozen=True)
class HeldOut:
    """Held-out figures of a release (see the module docstring)."""

    folds: int
    n_records: int
    breach_probability: float
    breach_probability_ci: tuple[float, float]
    breach_probability_plugin: float
    max_log_lift: float
    max_log_lift_ci: tuple[float, float]
    max_log_lift_plugin: float
    interval: str = (
        "95 % interval: cells breaking drawn from their posteriors under an empirical-Bayes "
        "prior of the tuples (refitted on bootstrap weights), cell masses Dirichlet(records)"
    )
    unseen_share: float = 0.0
    undecided_cells: int = 0

    def verdict(self, tolerance: float = 0.05) -> str:
        """``"met"`` when the interval's upper end is within ``tolerance``, ``"breach"`` when
        its lower end is above it (confirmed), ``"inconclusive"`` otherwise."""
        lo, hi = self.breach_probability_ci
        if hi <= tolerance:
            return "met"
        return "breach" if lo > tolerance else "inconclusive"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class _Value:
    """One fitted sensitive value: its column of projected counts and its allowed interval."""

    column: int
    bounds: tuple[float, float]
    prior: float
    pair: int | None  # the other value of a two-valued attribute (its share is 1 - theta)


def _values(box: LiftBox) -> list[_Value]:
    """The values to model: each group of projected values (the joint tuple, then each
    attribute); a two-valued group once, its box the intersection of both values' boxes."""
    out = []
    for g in range(int(box.groups.max()) + 1):
        cols = np.flatnonzero(box.groups == g)
        if len(cols) == 2:
            a, b = (int(c) for c in cols)
            lo = max(box.lo[a], 1.0 - box.hi[b])
            hi = min(box.hi[a], 1.0 - box.lo[b])
            out.append(_Value(a, (float(lo), float(hi)), float(box.prior[a]), b))
        else:
            out += [
                _Value(int(c), (float(box.lo[c]), float(box.hi[c])), float(box.prior[c]), None)
                for c in cols
            ]
    return out


def _star_cell(space: ReleaseSpace, plan: Plan, cell_of: IntArray, n_cells: int) -> int:
    """The all-``*`` cell (a new index when no tuple is released as it)."""
    keys = space.keys(plan.levels, plan.suppressed)
    star = (keys == np.asarray(space.star)).all(1)
    return int(cell_of[star][0]) if star.any() else n_cells


def _unseen_mass(n: FloatArray) -> float:
    """Good-Turing estimate of the population mass of tuples never seen: records whose tuple
    occurs once, as a share of all records."""
    total = float(n.sum())
    return float(np.isclose(n, 1.0).sum() / total) if total > 0 else 0.0


def _plugin(held: list[tuple[IntArray, int, FloatArray]], box: LiftBox) -> tuple[float, float, int]:
    """Share of held-out records in a cell whose held-out plug-in posterior breaks epsilon,
    the worst such log-lift, and the held-out records."""
    cells = [cell_counts(c, k, h) for c, k, h in held]
    ct = np.concatenate([c[c.sum(1) > 0] for c in cells], axis=0)
    size = ct.sum(1)
    worst = box.worst(ct)
    n = float(size.sum())
    return float(size[worst > box.epsilon + 1e-12].sum() / n), float(worst.max()), round(n)


def _choose_ridge(
    value: _Value,
    table: CountTable,
    projected: FloatArray,
    folds: list[tuple[IntArray, int]],
    rng: np.random.Generator,
) -> float:
    """The ridge penalty whose model, fitted on K-1 folds, predicts the held-out counts of the
    cells of the release fitted on those folds best (beta-binomial log score, summed)."""
    scores = []
    for ridge in eb.RIDGES:
        score = 0.0
        for k, (cell_of, n_cells) in enumerate(folds):
            train = table.total(exclude_fold=k) @ projected
            held = table.total(only_fold=k) @ projected
            nt = table.total(exclude_fold=k).sum(1)
            nh = table.total(only_fold=k).sum(1)
            model = eb.fit_tuple_model(
                train[:, value.column], nt, table.codes, value.prior, ridge, value.bounds, rng
            )
            rows = np.flatnonzero(nt > 0)
            mean, var, _ = eb.tuple_posteriors(
                model, model.weights, train[:, value.column], nt, rows, value.bounds
            )
            a, b, _ = eb.beta_of_cells(mean, var, nt[rows], cell_of[rows], n_cells)
            hk = np.bincount(cell_of, held[:, value.column], n_cells).astype(np.float64)
            hn = np.bincount(cell_of, nh, n_cells).astype(np.float64)
            seen = np.bincount(cell_of[rows], minlength=n_cells) > 0
            score += eb.heldout_score(a[seen], b[seen], hk[seen], hn[seen])
        scores.append(score)
    return float(eb.RIDGES[int(np.argmax(scores))])


def held_out_check(
    space: ReleaseSpace,
    table: CountTable,
    fit: Callable[[FloatArray], Plan],
    box: LiftBox,
    *,
    draws: int = 2000,
    replicates: int = 20,
    rng: np.random.Generator,
) -> HeldOut:
    """Estimate the population breach share of the release ``fit(table.total())`` with a 95 %
    interval, cross-fitting ``fit`` over the folds of ``table`` (see the module docstring).

    ``fit`` is searched once per fold and once on all records (the published release). The
    interval has ``draws`` Monte Carlo draws of the breach share over ``replicates`` draws of
    the prior; everything random is drawn from ``rng``.
    """
    n_folds = table.counts.shape[2]
    folds = []
    held = []
    for k in range(n_folds):
        cell_of_k, n_k = release_cells(space, fit(table.total(exclude_fold=k)))
        folds.append((cell_of_k, n_k))
        held.append((cell_of_k, n_k, table.total(only_fold=k)))
    plugin = _plugin(held, box)
    plan = fit(table.total())
    cell_of, n_cells = release_cells(space, plan)
    star = _star_cell(space, plan, cell_of, n_cells)
    return estimate_breach(
        table,
        box,
        folds,
        (cell_of, n_cells, star),
        plugin,
        draws=draws,
        replicates=replicates,
        rng=rng,
    )


def estimate_breach(
    table: CountTable,
    box: LiftBox,
    folds: list[tuple[IntArray, int]],
    release: tuple[IntArray, int, int],
    plugin: tuple[float, float, int],
    *,
    draws: int,
    replicates: int,
    rng: np.random.Generator,
) -> HeldOut:
    """The figures of :func:`held_out_check` from the cells (cell of every tuple row, and
    their number) of the fold releases and of the published one (with its all-``*`` cell)."""
    cell_of, n_cells, star = release
    breach_plugin, worst_plugin, n_held = plugin
    n_folds = len(folds)
    n_cells = max(n_cells, star + 1)
    total = table.total()
    x = total @ box.projection
    n = total.sum(1)
    unseen_mass = _unseen_mass(n) * float(n.sum())
    fitted = []
    for value in _values(box):
        ridge = _choose_ridge(value, table, box.projection, folds, rng)
        model = eb.fit_tuple_model(
            x[:, value.column], n, table.codes, value.prior, ridge, value.bounds, rng
        )
        unseen = (star, unseen_mass, eb.unseen_mean(model, x[:, value.column], n, value.bounds))
        fitted.append((value, model, unseen))
    per_value = [
        eb.cell_breach(model, model.weights, x[:, v.column], n, cell_of, n_cells, v.bounds, u)
        for v, model, u in fitted
    ]
    p_cell = 1.0 - np.prod([1.0 - r[0] for r in per_value], axis=0)
    size = per_value[0][1]
    estimate = float((size * p_cell).sum() / size.sum())
    sample = _draws(fitted, x, n, cell_of, n_cells, p_cell, size, draws, replicates, rng)
    lo, hi = (float(np.quantile(sample, q, method="inverted_cdf")) for q in (0.025, 0.975))
    worst, worst_ci = _worst(fitted, per_value, box)
    return HeldOut(
        folds=n_folds,
        n_records=n_held,
        breach_probability=estimate,
        breach_probability_ci=(min(lo, estimate), max(hi, estimate)),
        breach_probability_plugin=breach_plugin,
        max_log_lift=worst,
        max_log_lift_ci=worst_ci,
        max_log_lift_plugin=worst_plugin,
        unseen_share=unseen_mass / float(size.sum()),
        undecided_cells=int(((p_cell > DECIDED) & (p_cell < 1 - DECIDED) & (size > 0)).sum()),
    )


def _draws(
    fitted: list[tuple[_Value, eb.TupleModel, tuple[int, float, float]]],
    x: FloatArray,
    n: FloatArray,
    cell_of: IntArray,
    n_cells: int,
    p_cell: FloatArray,
    size: FloatArray,
    draws: int,
    replicates: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Draws of the breach share: per replicate the prior is refitted on Bayesian-bootstrap
    weights of the tuples, then cell masses ~ Dirichlet(size) and breaks ~ Bernoulli(P_c).
    Cells decided (P_c within 1e-9 of 0 or 1) enter as two aggregated masses."""
    live = size > 0
    open_ = live & (p_cell > DECIDED) & (p_cell < 1 - DECIDED)
    sure = live & (p_cell >= 1 - DECIDED)
    rest = live & ~open_ & ~sure
    keep = open_[cell_of]  # tuples of the undecided cells: their posteriors are redrawn
    per = -(-max(draws, 1) // max(replicates, 1))
    out = []
    for _ in range(max(replicates, 1)):
        p_open = p_cell[open_]
        if open_.any():
            miss = np.ones(n_cells)
            for value, model, unseen in fitted:
                k = x[:, value.column]
                w = eb.draw_weights(model, rng)
                p, *_ = eb.cell_breach(
                    model,
                    w,
                    k * keep,
                    n * keep,
                    cell_of,
                    n_cells,
                    value.bounds,
                    unseen if open_[unseen[0]] else None,
                )
                miss *= 1.0 - p
            p_open = 1.0 - miss[open_]
        g_open = rng.gamma(size[open_], size=(per, int(open_.sum())))
        g_sure = rng.gamma(size[sure].sum(), size=per) if sure.any() else np.zeros(per)
        g_rest = rng.gamma(size[rest].sum(), size=per) if rest.any() else np.zeros(per)
        hit = rng.random((per, int(open_.sum()))) < p_open
        tot = g_open.sum(1) + g_sure + g_rest
        out.append(((g_open * hit).sum(1) + g_sure) / tot)
    return np.concatenate(out)[:draws]


def _worst(
    fitted: list[tuple[_Value, eb.TupleModel, tuple[int, float, float]]],
    per_value: list[tuple[FloatArray, FloatArray, FloatArray, FloatArray]],
    box: LiftBox,
) -> tuple[float, tuple[float, float]]:
    """The worst log-lift of a released cell at its posterior mean, and that cell's 95 %
    posterior interval of it (|log-lift| two-sided, log-lift one-sided)."""
    best = (-np.inf, (-np.inf, -np.inf))
    for (value, _, _), (_, size, a, b) in zip(fitted, per_value, strict=True):
        live = size > 0
        a, b = a[live], b[live]
        shares = [a / (a + b), betaincinv(a, b, 0.025), betaincinv(a, b, 0.975)]
        sides = [(value.column, 1.0, 0.0)] + (
            [] if value.pair is None else [(value.pair, -1.0, 1.0)]
        )
        for col, sign, shift in sides:
            mean, q1, q2 = (
                np.log(np.maximum(shift + sign * s, 1e-300)) - np.log(box.prior[col])
                for s in shares
            )
            lo, hi = np.minimum(q1, q2), np.maximum(q1, q2)
            if box.disclosure == "both":
                mean = np.abs(mean)
                lo, hi = (
                    np.where((lo < 0) & (hi > 0), 0.0, np.minimum(abs(lo), abs(hi))),
                    np.maximum(abs(lo), abs(hi)),
                )
            i = int(np.argmax(mean))
            if mean[i] > best[0]:
                best = (float(mean[i]), (float(min(lo[i], mean[i])), float(max(hi[i], mean[i]))))
    return best
