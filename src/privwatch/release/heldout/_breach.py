"""The held-out check: how much of the population falls in a released cell that breaks epsilon?

**What is estimated.** The published release maps every observed tuple to a cell (a tuple never
seen in the data goes to the suppressed cell, ``*`` in every column, as the saved mechanism's
``apply`` does). In the population each cell c has a mass W_c and a true posterior p(s | c); the
*breach share* is

.. math:: B = \\sum_c W_c \\, 1[\\, p(s \\mid c) \\notin \\text{the lift box} \\,],

the share of the population whose released cell breaks epsilon (two-sided or one-sided, as the
guarantee). ``breach_probability`` estimates B; ``breach_probability_ci`` is a 95 % interval.

**How.** A cell is a mixture of observed tuples, so the estimate models the tuples' p(s | x)
(:mod:`._prior`): per sensitive value, logit p(v | x) = eta_x + r_x, with eta_x
ridge-penalised main effects of the observed columns and r_x ~ G a log-spline prior (Efron's
g-modelling) fitted on every tuple, one G per size stratum of the tuples (:mod:`._prior`: a
tuple's size predicts its spread, and the releases keep or merge tuples by their counts).
The prior family (ridge 3, 30 or no main effects; a smooth
or a rough G) is chosen by cross-fitted predictive score on the folds' held-out counts of the
tuples (:mod:`._model`). The search chose the released cells by their counts, but the
prior is fitted on all tuples, which the search did not select, so each cell's posterior is
free of the winner's curse. Then (:mod:`._evaluation`)

- ``P_c`` = posterior probability that cell c breaks epsilon: per value, the mass of the cell's
  posterior outside the box (a one-tuple cell: the tuple's posterior; a larger cell: a Beta
  matching the mean and variance of the weighted mean of its tuples, independent given the
  prior); several values: 1 - prod_v (1 - P_cv) (for two values of one attribute the two events
  are one, computed once exactly);
- ``breach_probability`` = sum_c W_c P_c / sum_c W_c, with W_c the cell's records, the
  suppressed cell also holding the mass of tuples never seen (Good-Turing: the share of records
  whose tuple occurs once) as a pseudo-tuple whose share is that of the tuples seen once: the
  mean of their posterior means, with the variance of their average, sum_x v_x / n_1^2, under
  the fitted prior and under each replicate (a share read from n_1 records is not known to a
  point);
- the interval: 2.5 % and 97.5 % quantiles of sum_c W_c I_c / sum_c W_c with I_c ~
  Bernoulli(P_c) independent, W ~ Dirichlet(records) (Bayesian bootstrap), over ``replicates``
  draws of what the model is unsure of: the prior family (re-chosen on bootstrap weights), G
  (refitted on bootstrap weights of the tuples) and the population's p(s) (a Dirichlet draw:
  the box moves with it). Only cells not decided by a bound, under the fitted prior and under
  every replicate, are drawn; given the I_c the share
  is one Beta variate, so the cost grows with the undecided cells, not cells x draws;
- the interval's guard (:mod:`._identified`): where the records do not reject a prior with no
  mass inside the box (every tuple breaking; a likelihood-ratio test against the fitted G),
  the upper end is at least the 97.5 % quantile of the breach share with the one-tuple cells
  judged under that prior, the larger over two allocations of the unseen mass (the cells
  weighed by their records alone, or as fitted: :func:`gap_upper`), and the interval's
  description says so.

**Cost.** The tuple model is fitted once per count table and kept
(:meth:`._model.HeldOutModel.of`): later checks of other releases of the same table
(margins, alternatives) evaluate cells only. The fit is bounded whatever the table's size
(subsets of tuples for the main effects, the prior and the score); the posterior moments of all
tuples are one pass, shared by tuples of equal counts, closed-form for tuples with many records.

**Where the folds come in.** The folds' held-out counts choose the prior family. With
``cross_fit``, the release is also searched on K-1 folds and the held-out fold released through
it, for the plug-in figures ``breach_probability_plugin`` (the share of held-out records whose
cell's held-out posterior breaks epsilon: pessimistic, a cell of three records shows zeros) and
``max_log_lift_plugin``. ``max_log_lift`` is the worst log-lift of a released cell at its
posterior mean, ``max_log_lift_ci`` that cell's 95 % posterior interval.

**Assumptions.** The records are independent draws from the population; given the prior the
tuples' shares are independent (shared values enter through the main effects); the tuples'
spread around the main effects is one distribution G per value, smooth on the scale of the
spline's knots (a rough G has knots 0.44 log-odds apart: a population whose shares pile up
sharply at a box edge, or split into two spikes, is resolved only as far as the records allow;
where they cannot rule out that every tuple breaks, the guard above widens the upper end;
BENCHMARKS.md). The figures depend on ``rng`` and the table only. :meth:`HeldOut.verdict`
turns them into MET (the interval's upper end within the tolerance), a confirmed breach (its
lower end above it) or too thin evidence, by the one rule of :mod:`._verdict`.

**Searched or fixed cells.** :func:`estimate_breach` takes the cells as given (the cell of every
tuple row): the search's held-out check (:func:`privwatch.release.search.held_out_check`)
searches the release and gives its cells, ``privwatch check`` gives the cells of a release made
elsewhere; :func:`plugin_figures` scores the held-out folds' records in them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import betaincinv

from ..cells import CountTable, LiftBox, cell_counts
from ._evaluation import DECIDED, Value, _Evaluation, _share_draws, values_of
from ._identified import gap_outside
from ._model import HeldOutModel, ValueModel
from ._verdict import DRAWS, REPLICATES, TOLERANCE, verdict_rule

__all__ = ["BreachCheck", "HeldOut", "estimate_breach", "plugin_figures"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


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

    def verdict(self, tolerance: float = TOLERANCE) -> str:
        """``"met"`` when the interval's upper end is within ``tolerance``, ``"breach"`` when
        its lower end is above it (confirmed), ``"inconclusive"`` otherwise
        (:func:`~privwatch.release.heldout.verdict_rule`)."""
        return verdict_rule(self.breach_probability_ci, tolerance)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


#: What the interval's description adds when the gap priors were adopted (:mod:`._identified`).
GAP_NOTE = (
    "; the records do not reject a prior with no mass inside the box (every tuple breaking), "
    "so the upper end is at least the one-tuple cells' under it"
)


def _unseen_mass(n: FloatArray) -> float:
    """Good-Turing estimate of the population mass of tuples never seen: records whose tuple
    occurs once, as a share of all records."""
    total = float(n.sum())
    return float(np.isclose(n, 1.0).sum() / total) if total > 0 else 0.0


def plugin_figures(
    held: list[tuple[IntArray, int, FloatArray]], box: LiftBox
) -> tuple[float, float, int]:
    """Share of held-out records in a cell whose held-out plug-in posterior breaks epsilon,
    the worst such log-lift, and the held-out records.

    ``held``: per fold, the cell of every tuple row (of the release that fold was scored
    with), the number of cells, and the fold's own counts (rows: tuple rows)."""
    cells = [cell_counts(c, k, h) for c, k, h in held]
    ct = np.concatenate([c[c.sum(1) > 0] for c in cells], axis=0)
    size = ct.sum(1)
    worst = box.worst(ct)
    n = float(size.sum())
    return float(size[worst > box.epsilon + 1e-12].sum() / n), float(worst.max()), round(n)


def estimate_breach(
    table: CountTable,
    box: LiftBox,
    folds: list[tuple[IntArray, int]],
    release: tuple[IntArray, int, int],
    plugin: tuple[float, float, int],
    *,
    draws: int = DRAWS,
    replicates: int = REPLICATES,
    rng: np.random.Generator,
    model: HeldOutModel | None = None,
) -> HeldOut:
    """The held-out figures of a release (module docstring) from the cells (cell of every tuple
    row, and their number) of the fold releases and of the published one (with its all-``*``
    cell); ``plugin``: :func:`plugin_figures` of the folds (NaN, NaN and the records without).

    ``draws`` Monte Carlo draws of the breach share over ``replicates`` draws of the prior
    give the interval (:data:`~._verdict.DRAWS`, :data:`~._verdict.REPLICATES`: the same for
    every caller); they come from ``rng``. ``model``: the table's fitted tuple model
    (:class:`~._model.HeldOutModel`; default the cached one of ``table``). The fold releases
    only give the count of folds here."""
    check = BreachCheck(table, box, release, model)
    return check.figures(folds, plugin, draws=draws, replicates=replicates, rng=rng)


class BreachCheck:
    """:func:`estimate_breach` in two steps: the point estimate of the breach share
    (:attr:`estimate`, computed at once: the cells' P_c under the fitted prior), then, on
    :meth:`figures`, the interval (the replicates and draws, most of the cost) and the rest.

    A caller that needs only whether the check fails can stop at the estimate when it exceeds
    the tolerance: the interval's upper end is at least the estimate, so the verdict is not met
    whatever the draws. :meth:`figures` gives what :func:`estimate_breach` gives, bit for bit
    (the same steps on the same arrays; the draws come from its own ``rng``)."""

    def __init__(
        self,
        table: CountTable,
        box: LiftBox,
        release: tuple[IntArray, int, int],
        model: HeldOutModel | None = None,
    ) -> None:
        cell_of, n_cells, star = release
        n_cells = max(n_cells, star + 1)
        model = HeldOutModel.of(table, box.projection) if model is None else model
        values = values_of(box)
        fitted = model.values([(v.column, v.prior) for v in values])
        unseen_mass = _unseen_mass(model.n) * float(model.n.sum())
        ev = _Evaluation(model, cell_of, n_cells, (star, unseen_mass))
        per_value = [ev.point(vm, v.bounds) for v, vm in zip(values, fitted, strict=True)]
        p_cell = 1.0 - np.prod([1.0 - r[0] for r in per_value], axis=0)
        size = per_value[0][1]
        self.estimate = float((size * p_cell).sum() / size.sum())
        self._parts = (table, box, model, values, fitted, unseen_mass, ev, per_value, p_cell, size)

    @property
    def cell_breach(self) -> FloatArray:
        """Per cell, P_c: the posterior probability that it breaks epsilon under the fitted
        prior (the point estimate's terms; the suppressed cell's includes the unseen mass)."""
        return np.array(self._parts[8], dtype=float)

    def figures(
        self,
        folds: list[tuple[IntArray, int]],
        plugin: tuple[float, float, int],
        *,
        draws: int = DRAWS,
        replicates: int = REPLICATES,
        rng: np.random.Generator,
    ) -> HeldOut:
        """The held-out figures (:func:`estimate_breach`'s arguments)."""
        table, box, model, values, fitted, unseen_mass, ev, per_value, p_cell, size = self._parts
        estimate = self.estimate
        breach_plugin, worst_plugin, n_held = plugin
        priors = [p @ box.projection for p in model.prior_draws(replicates)]
        open_, sure = ev.undecided(fitted, box, priors, p_cell, size)
        sample = ev.draws(fitted, box, priors, (p_cell, size, open_, sure), draws, rng)
        lo, hi = (float(np.quantile(sample, q, method="inverted_cdf")) for q in (0.025, 0.975))
        gap_hi = self._gap_upper(draws, rng)
        worst, worst_ci = _worst(values, per_value, box)
        return HeldOut(
            folds=table.counts.shape[2],
            n_records=n_held,
            breach_probability=estimate,
            breach_probability_ci=(min(lo, estimate), max(hi, estimate, gap_hi or 0.0)),
            breach_probability_plugin=breach_plugin,
            max_log_lift=worst,
            max_log_lift_ci=worst_ci,
            max_log_lift_plugin=worst_plugin,
            unseen_share=unseen_mass / float(size.sum()),
            undecided_cells=int(open_.sum()),
            **({} if gap_hi is None else {"interval": HeldOut.interval + GAP_NOTE}),
        )

    def _gap_upper(self, draws: int, rng: np.random.Generator) -> float | None:
        """:func:`gap_upper` of this release's one-tuple cells."""
        _, _, model, values, fitted, _, ev, per_value, _, size = self._parts
        rows = ev.rows
        alone = rows[ev.single[ev.cell_of[rows]]]
        lone = (ev.cell_of[alone], alone)
        p_values = [p for p, *_ in per_value]
        return gap_upper(model, values, fitted, p_values, size, lone, draws, rng, ev.unseen)


def gap_upper(
    model: HeldOutModel,
    values: list[Value],
    fitted: list[ValueModel],
    p_values: list[FloatArray],
    size: FloatArray,
    lone: tuple[IntArray, IntArray],
    draws: int,
    rng: np.random.Generator,
    unseen: tuple[int, float] = (0, 0.0),
) -> float | None:
    """The 97.5 % quantile of the breach share with the one-tuple cells' P_c (``lone``: the
    cells, and their tuple rows) under the gap priors of the values whose records do not
    reject them (:mod:`._identified`), the other cells' P_c as fitted (``p_values``: per value,
    per cell), each cell breaking independently, the masses Dirichlet(records); None when no
    value's records leave them possible (no draw is made: the figures are those of the fitted
    model alone, to the bit).

    ``unseen``: the cell holding the unseen pseudo-tuple and its records (Good-Turing's N1),
    which ``size`` includes. The fitted check takes the unseen tuples' mass, N1 / (n + N1) of
    the total, out of every cell in proportion; Good-Turing takes it out of the tuples seen
    once (their true mass is about 2 N2 / n, not N1 / n: Good, 1953), so that a cell of many
    records keeps about its records' share. The counts do not say which holds, so the guard
    draws under both and keeps the larger quantile: with every cell weighed by its records
    alone (the pseudo-tuple taken out; drawn first) and with the masses as given. The first
    is the larger where the cells the gap prior breaks are kept ones, the second where the
    suppressed cell breaks. In ``gross`` (BENCHMARKS.md, #41 item 6, eighth and ninth
    sessions) the kept tuples of 16-65 records were shrunk by n / (n + N1) = 0.80 by the
    pseudo-tuple, and the truth exceeded the guard's upper end in most misses."""
    cells, rows = lone
    if not len(rows):
        return None
    star, extra = unseen
    own = size
    if extra > 0:
        own = size.copy()
        own[star] = max(float(size[star]) - extra, 0.0)
    miss = np.ones(len(size))
    adopted = False
    for value, vm, p in zip(values, fitted, p_values, strict=True):
        gap = vm.gap(model, value.bounds)
        if gap is not None:
            p = p.copy()
            k, n, eta = model.x[rows, vm.column], model.n[rows], vm.fitted.eta[rows]
            p[cells] = gap_outside(gap, k, n, eta, value.bounds)
            adopted = True
        miss *= 1.0 - p
    if not adopted:
        return None
    p_gap = 1.0 - miss
    return max(_upper(p_gap, s, draws, rng) for s in ([own, size] if extra > 0 else [size]))


def _upper(p: FloatArray, size: FloatArray, draws: int, rng: np.random.Generator) -> float:
    """The 97.5 % quantile of the breach share of cells breaking with ``p``, independently,
    their masses Dirichlet(``size``)."""
    live = size > 0
    sure = live & (p >= 1.0 - DECIDED)
    open_ = live & ~sure & (p > DECIDED)
    rest = float(size[live & ~sure & ~open_].sum())
    sample = _share_draws(p[open_], size[open_], float(size[sure].sum()), rest, draws, rng)
    return float(np.quantile(sample, 0.975, method="inverted_cdf"))


def _worst(
    values: list[Value],
    per_value: list[tuple[FloatArray, FloatArray, FloatArray, FloatArray]],
    box: LiftBox,
) -> tuple[float, tuple[float, float]]:
    """The worst log-lift of a released cell at its posterior mean, and that cell's 95 %
    posterior interval of it (|log-lift| two-sided, log-lift one-sided)."""
    best = (-np.inf, (-np.inf, -np.inf))
    for value, (_, size, a, b) in zip(values, per_value, strict=True):
        live = size > 0
        a, b = a[live], b[live]
        sides = [(value.column, 1.0, 0.0)] + (
            [] if value.pair is None else [(value.pair, -1.0, 1.0)]
        )
        for col, sign, shift in sides:
            mean = np.log(np.maximum(shift + sign * (a / (a + b)), 1e-300)) - np.log(box.prior[col])
            if box.disclosure == "both":
                mean = np.abs(mean)
            i = int(np.argmax(mean))  # the interval of this cell alone (the same figures)
            ai, bi = a[i : i + 1], b[i : i + 1]
            shares = [ai / (ai + bi), betaincinv(ai, bi, 0.025), betaincinv(ai, bi, 0.975)]
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
            if mean[0] > best[0]:
                best = (float(mean[0]), (float(min(lo[0], mean[0])), float(max(hi[0], mean[0]))))
    return best
