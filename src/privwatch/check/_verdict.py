r"""The verdict on a fixed release: the audit's rules, applied to cells another tool made.

**Cells.** A released cell is a distinct released tuple of the observed columns; the records not
listed in the release and those released as ``*`` everywhere form the suppressed cell.

**In-sample.** Each cell's posterior ``p(s | cell)`` on the original records, its log-lift
against the records' ``p(s)`` (two-sided or one-sided, as the audit), exactly. Unlike a release
privwatch searched, nothing guarantees that an external release meets epsilon here: when a cell
breaks it, that is a reason the release is not met.

**Held-out, for a release made elsewhere.** The release cannot be refitted on K-1 folds (the
tool that made it is not here), so what is estimated is the population breach share of *these
cells*: every record is a draw from a population; each cell's true posterior is estimated by
the audit's own empirical-Bayes model of the original tuples
(:func:`privwatch.release.heldout.estimate_breach`): rows are the distinct (original tuple,
released cell) pairs, so a release that is not a function of the tuple (local recoding by
record, perturbation) is modelled as it is. The folds (the audit's, by row position) only choose
the model's ridge and give the plug-in held-out figures, each fold scored on the same cells. The
prior is fitted on every tuple, which the other tool did not select, so a cell chosen for its
counts (k-anonymity, l-diversity) does not bias it. As in the audit, the mass of tuples never
seen (Good-Turing) is put in the suppressed cell: for another tool that is an assumption (where
it would release a new record is unknown), said in ``check.held_out_meaning``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..audit import PROPOSAL_GRID
from ..engines import fold_of
from ..release import SUPPRESSED, HeldOut, LiftBox, as_text
from ..release.cells import (
    CountTable,
    cell_counts,
    entropy_of_sizes,
    first_rows,
    group_rows,
    table_protection,
)
from ..release.heldout import (
    NOTHING_KEPT,
    estimate_breach,
    held_out_verdict,
    not_met_reasons,
    plugin_figures,
)
from ..release.search import SearchOptions
from ._align import Aligned

__all__ = ["FixedRelease", "Judged", "count_release", "judge", "smallest_met"]


@dataclass(frozen=True)
class FixedRelease:
    """A release counted: rows are distinct (original tuple, released cell) pairs."""

    table: CountTable
    cell_of: np.ndarray  # cell of each row
    n_cells: int
    star: int  # the suppressed cell (n_cells when the release has none)
    record_cell: np.ndarray  # cell of each record
    record_tuple: np.ndarray  # original tuple of each record
    row_tuple: np.ndarray  # original tuple of each row
    folds: int

    @property
    def cells(self) -> np.ndarray:
        """Cell x sensitive-value counts, all records."""
        return cell_counts(self.cell_of, self.n_cells, self.table.total())

    def box(self, epsilon: float, disclosure: str) -> LiftBox:
        prior = self.table.total().sum(0)
        return LiftBox(prior, self.table.marginals(), epsilon, disclosure)


def count_release(aligned: Aligned, folds: int, seed: int) -> FixedRelease:
    """Count the aligned release (module docstring); folds by row position, as the audit."""
    obs, n = aligned.observed, len(aligned.original)
    released = aligned.released.copy()
    released.loc[aligned.suppressed, obs] = SUPPRESSED
    rel = np.stack([pd.factorize(released[c])[0] for c in obs], axis=1)
    cell, n_cells = group_rows(rel)
    orig = np.stack([pd.factorize(as_text(aligned.original[c]))[0] for c in obs], axis=1)
    tup, _ = group_rows(orig)
    row_of, n_rows = group_rows(np.column_stack([orig, cell]))
    first = first_rows(row_of, n_rows)
    sens = aligned.original[aligned.sensitive].astype(str)
    s_codes, s_uniques = pd.factorize(pd.MultiIndex.from_frame(sens), sort=True)
    fold = fold_of(np.arange(n), folds, seed) if folds >= 2 else np.zeros(n, dtype=np.int64)
    counts = np.zeros((n_rows, len(s_uniques), max(folds, 1)))
    np.add.at(counts, (row_of, s_codes, np.asarray(fold, dtype=np.int64)), 1.0)
    table = CountTable(
        tuple(obs),
        tuple(aligned.sensitive),
        orig[first].astype(np.int64),
        counts,
        [tuple(str(x) for x in v) for v in s_uniques],
    )
    stars = np.flatnonzero((released[obs] == SUPPRESSED).all(axis=1).to_numpy())
    star = int(cell[stars[0]]) if len(stars) else n_cells
    return FixedRelease(table, cell[first], n_cells, star, cell, tup, tup[first], folds)


@dataclass(frozen=True)
class Judged:
    """The release judged at one epsilon."""

    epsilon: float
    disclosure: str
    worst: np.ndarray  # per cell, its worst log-lift (in-sample)
    by_group: np.ndarray  # worst log-lift per guarantee (joint, then each attribute)
    breach_records: int  # records in cells that break epsilon in-sample
    information: float
    held: HeldOut | None
    protection: list[dict[str, object]]
    reasons: list[str]
    verdict: str | None  # the held-out verdict

    @property
    def satisfied(self) -> bool:
        return not self.reasons

    @property
    def max_log_lift(self) -> float:
        return float(self.worst.max()) if self.worst.size else 0.0


def information(fixed: FixedRelease) -> tuple[float, float]:
    """(entropy of the released cells, entropy of the original tuples), nats."""
    n = float(len(fixed.record_cell))
    kept = entropy_of_sizes(np.bincount(fixed.record_cell).astype(float), n)
    return kept, entropy_of_sizes(np.bincount(fixed.record_tuple).astype(float), n)


def held_out(fixed: FixedRelease, box: LiftBox, seed: int) -> HeldOut:
    """The held-out figures of the fixed cells (module docstring), with the audit's draws
    (:data:`~privwatch.release.heldout.DRAWS`, :data:`~privwatch.release.heldout.REPLICATES`)."""
    t = fixed.table
    each = [(fixed.cell_of, fixed.n_cells)] * fixed.folds
    plugin = plugin_figures([(c, k, t.total(only_fold=i)) for i, (c, k) in enumerate(each)], box)
    return estimate_breach(
        t, box, each, (fixed.cell_of, fixed.n_cells, fixed.star), plugin,
        rng=np.random.default_rng(seed),
    )  # fmt: skip


def judge(
    fixed: FixedRelease, epsilon: float, disclosure: str, tolerance: float, seed: int
) -> Judged:
    """The audit's verdict rules on the fixed release at ``epsilon``, plus the in-sample rule a
    release made elsewhere can break."""
    box = fixed.box(epsilon, disclosure)
    ct = fixed.cells
    live = ct.sum(1) > 0
    worst = box.worst(ct[live])
    by_group = box.worst_by_group(ct[live]).max(0)
    breaking = round(float(ct[live].sum(1)[worst > epsilon + 1e-12].sum()))
    kept, _ = information(fixed)
    held = held_out(fixed, box, seed) if fixed.folds >= 2 and kept > NOTHING_KEPT else None
    protection = table_protection(fixed.table, epsilon, disclosure)
    options = SearchOptions(epsilon=epsilon, disclosure=disclosure, max_suppressed=1.0)
    reasons = not_met_reasons(options, kept, held, tolerance, protection)
    if kept <= NOTHING_KEPT:
        reasons[0] = "the release keeps no information: every record is suppressed ('*')"
    if breaking:
        n = len(fixed.record_cell)
        reasons.insert(
            0,
            f"on the original records themselves, {breaking:,} of {n:,} ({breaking / n:.1%}) "
            f"fall in a released cell that breaks epsilon {epsilon:g} (worst log-lift "
            f"{float(worst.max()):.3g} nats" + (", a cell rules a value out)" if
            not math.isfinite(float(worst.max())) else ")"),
        )  # fmt: skip
    return Judged(
        epsilon, disclosure, worst, by_group, breaking, kept, held, protection, reasons,
        held_out_verdict(held, tolerance),
    )  # fmt: skip


def smallest_met(
    fixed: FixedRelease, disclosure: str, tolerance: float, seed: int
) -> tuple[Judged, str]:
    """The smallest epsilon the release meets, held-out check included: its in-sample worst
    log-lift (rounded up to 1e-4), then the proposal grid of the audit above it; the last one
    tried, not met, when none is (or no finite epsilon when a cell rules a value out)."""
    ct = fixed.cells
    probe = fixed.box(1.0, disclosure)
    start = float(probe.worst(ct[ct.sum(1) > 0]).max())
    top = max(PROPOSAL_GRID)
    if not math.isfinite(start):
        judged = judge(fixed, top, disclosure, tolerance, seed)
        return judged, (
            "no finite epsilon is met: a released cell rules a sensitive value out (two-sided "
            f"lift privacy is infinite there); judged at {top:g}"
        )
    first = max(math.ceil(start * 1e4) / 1e4, 1e-4)
    candidates = [first, *(g for g in PROPOSAL_GRID if g > first)]
    judged = judge(fixed, first, disclosure, tolerance, seed)
    for eps in candidates:
        if eps != first:
            judged = judge(fixed, eps, disclosure, tolerance, seed)
        if judged.satisfied:
            return judged, (
                f"the smallest epsilon the release meets, held-out check included (its "
                f"in-sample worst log-lift is {start:.4g} nats)"
            )
        if all(not r["protected"] for r in judged.protection):
            break
    return judged, (
        f"no epsilon from the release's in-sample worst log-lift ({start:.4g} nats) up to "
        f"{judged.epsilon:g} is met (larger ones protect no more values); the last one tried "
        "is shown"
    )
