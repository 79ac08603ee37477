"""The held-out check of a searched release: searched again without each fold, then estimated.

The published release is searched on all records; with ``cross_fit`` it is also searched on each
fold's training folds and that fold's records scored in its cells (the plug-in figures,
:func:`~privwatch.release.heldout.plugin_figures`). The population breach share and its interval
come from the held-out model of the table (:func:`~privwatch.release.heldout.estimate_breach`),
the unseen tuples' mass in the release's all-``*`` cell.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..cells import CountTable, LiftBox
from ..heldout import DRAWS, REPLICATES, BreachCheck, HeldOut, one_blas_thread, plugin_figures
from ._global_recoding import FloatArray, IntArray, Plan, ReleaseSpace, release_cells

__all__ = ["HeldOutCheck", "held_out_check"]


def _star_cell(space: ReleaseSpace, plan: Plan, cell_of: IntArray, n_cells: int) -> int:
    """The all-``*`` cell (a new index when no tuple is released as it)."""
    keys = space.keys(plan.levels, plan.suppressed)
    star = (keys == np.asarray(space.star)).all(1)
    return int(cell_of[star][0]) if star.any() else n_cells


def held_out_check(
    space: ReleaseSpace,
    table: CountTable,
    fit: Callable[[FloatArray], Plan],
    box: LiftBox,
    *,
    draws: int = DRAWS,
    replicates: int = REPLICATES,
    rng: np.random.Generator,
    cross_fit: bool = True,
) -> HeldOut:
    """Estimate the population breach share of the release ``fit(table.total())`` with a 95 %
    interval (:func:`~privwatch.release.heldout.estimate_breach`).

    ``fit`` is searched on all records (the published release) and, with ``cross_fit``, once
    per fold for the plug-in figures (without: those are NaN and the check costs one search;
    the estimate and its interval are the same). The interval has ``draws`` Monte Carlo draws
    of the breach share over ``replicates`` draws of the prior; they come from ``rng``. The
    table's tuple model is fitted once and reused by later calls on the same table
    (:class:`~privwatch.release.heldout.HeldOutModel`).
    """
    check = HeldOutCheck(
        space, table, fit, box, draws=draws, replicates=replicates, rng=rng, cross_fit=cross_fit
    )
    return check.figures()


class HeldOutCheck:
    """:func:`held_out_check` in two steps (:class:`~privwatch.release.heldout.BreachCheck`):
    the searches and the point estimate of the breach share (:attr:`estimate`) at once, the
    interval and the other figures on :meth:`figures`, the same as :func:`held_out_check`'s.
    A check whose estimate exceeds the tolerance fails whatever its interval, so a caller
    that needs only the verdict of a release it does not publish can stop there."""

    def __init__(
        self,
        space: ReleaseSpace,
        table: CountTable,
        fit: Callable[[FloatArray], Plan],
        box: LiftBox,
        *,
        draws: int = DRAWS,
        replicates: int = REPLICATES,
        rng: np.random.Generator,
        cross_fit: bool = True,
    ) -> None:
        n_folds = table.counts.shape[2]
        folds = []
        held = []
        for k in range(n_folds if cross_fit else 0):
            cell_of_k, n_k = release_cells(space, fit(table.total(exclude_fold=k)))
            folds.append((cell_of_k, n_k))
            held.append((cell_of_k, n_k, table.total(only_fold=k)))
        nan = float("nan")
        plugin = plugin_figures(held, box) if held else (nan, nan, table.n_records)
        plan = fit(table.total())
        cell_of, n_cells = release_cells(space, plan)
        star = _star_cell(space, plan, cell_of, n_cells)
        with one_blas_thread():
            self._check = BreachCheck(table, box, (cell_of, n_cells, star))
        self.estimate = self._check.estimate
        self._rest = (folds, plugin, draws, replicates, rng)

    def figures(self) -> HeldOut:
        """The held-out figures (:func:`held_out_check`'s)."""
        folds, plugin, draws, replicates, rng = self._rest
        with one_blas_thread():
            return self._check.figures(folds, plugin, draws=draws, replicates=replicates, rng=rng)
