"""``find_release``: the most detailed release of a table that meets lift privacy.

Notation: Hsu et al. and Sadeghi et al. write S for the sensitive attribute, X for the observed
tuple and Y for the release; epsilon-lift privacy asks |log p(s|y)/p(s)| <= epsilon for every
released cell y (``disclosure="both"``, Hsu et al. Def. 1) or only log p(s|y)/p(s) <= epsilon
(``"positive"``: enhanced beta-likeness of Cao & Karras, VLDB 2012, with beta = e^epsilon - 1).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_positive_int, check_probability
from ..engines import fold_of
from ..exceptions import PrivwatchError, ValidationError
from ._cells import CountTable, LiftBox, cell_counts, first_rows, group_rows
from ._heldout import HeldOut, held_out_check
from ._hierarchy import Hierarchy, build_hierarchies
from ._local import refine_locally
from ._options import SearchOptions
from ._search import (
    Plan,
    ReleaseSpace,
    finest_bound,
    information,
    release_cells,
    search_global,
)

__all__ = ["ReleaseNotMetWarning", "ReleaseResult", "find_release"]


class ReleaseNotMetWarning(UserWarning):
    """The requested guarantee could not be delivered (see ``ReleaseResult.reasons``)."""


@dataclass
class ReleaseResult:
    """A release with its in-sample guarantee, held-out figures and the search's frontier."""

    satisfied: bool
    reasons: list[str]
    alternatives: list[str]
    epsilon: float
    disclosure: str
    max_suppressed: float
    method: str
    generalisation: dict[str, Any]
    information_nats: float
    information_global_nats: float
    information_local_nats: float | None
    information_input_nats: float
    suppressed_records: int
    perturbed_records: int
    n_records: int
    max_log_lift: float
    max_log_lift_by_attribute: dict[str, float]
    held_out: HeldOut | None
    frontier: list[dict[str, Any]]
    nodes_evaluated: int
    search_complete: bool
    released: pd.DataFrame = field(repr=False)
    records: pd.DataFrame = field(repr=False)
    hierarchies: dict[str, Hierarchy] = field(repr=False, default_factory=dict)
    mapping: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)

    def to_dict(self) -> dict[str, Any]:
        """The ``release`` / ``guarantee`` / ``held_out`` / ``frontier`` parts of leakage.json."""
        return {
            "status": "met" if self.satisfied else "not_met",
            "reasons": list(self.reasons),
            "alternatives": list(self.alternatives),
            "release": {
                "method": self.method,
                "generalisation": self.generalisation,
                "entropy_nats": self.information_nats,
                "information_global_nats": self.information_global_nats,
                "information_local_nats": self.information_local_nats,
                "information_input_nats": self.information_input_nats,
                "suppressed_records": self.suppressed_records,
                "perturbed_records": self.perturbed_records,
                "n_records": self.n_records,
                "nodes_evaluated": self.nodes_evaluated,
                "search_complete": self.search_complete,
            },
            "guarantee": {
                "epsilon": self.epsilon,
                "disclosure": self.disclosure,
                "max_suppressed": self.max_suppressed,
                "max_log_lift_in_sample": self.max_log_lift,
                "max_log_lift_by_attribute": self.max_log_lift_by_attribute,
                "scope": "exact for the fitted (in-sample) distribution; see held_out",
            },
            "held_out": None if self.held_out is None else self.held_out.to_dict(),
            "frontier": self.frontier,
        }


class _Fitter:
    """Search (global, then local refinement) with one set of options on given counts.

    Every search behind a release (the release, its held-out folds, the frontier, the
    alternatives) is one of these, built from a whole :class:`SearchOptions`.
    """

    def __init__(self, space: ReleaseSpace, table: CountTable, options: SearchOptions) -> None:
        self.space, self.table, self.options = space, table, options
        self.local = options.local
        self.max_suppressed = options.max_suppressed
        self.max_nodes = options.max_nodes
        self.box = LiftBox(
            table.total().sum(0),
            table.marginals(),
            options.epsilon,
            options.disclosure,
            options.confidence,
        )

    def fit(self, counts: np.ndarray) -> tuple[Plan, float, float | None, int, tuple[int, ...]]:
        best, evaluated = search_global(
            self.space, counts, self.box, self.max_suppressed, max_nodes=self.max_nodes
        )
        plan, value_local = best.plan, None
        if self.local:
            root = Plan(
                np.tile(self.space.n_levels - 1, (counts.shape[0], 1)),
                np.ones(counts.shape[0], dtype=bool),
            )
            # refining the root cannot beat a global release that keeps the finest information
            starts = [best.plan, root]
            if best.information >= finest_bound(self.space, counts) - 1e-12:
                starts = [best.plan]
            candidates = [refine_locally(self.space, p, counts, self.box) for p in starts]
            values = [
                information(self.space, *release_cells(self.space, p), counts) for p in candidates
            ]
            i = int(np.argmax(values))
            value_local = values[i]
            if value_local > best.information + 1e-12:
                plan = candidates[i]
        return plan, best.information, value_local, evaluated, best.levels

    def plan(self, counts: np.ndarray) -> Plan:
        return self.fit(counts)[0]


def _check_folds(folds: int) -> None:
    if folds != 0:
        check_positive_int(folds, "folds")
        if folds < 2:
            raise ValidationError(f"`folds` must be 0 (no held-out check) or >= 2; got {folds}.")


def find_release(
    frame: pd.DataFrame,
    sensitive: str | Sequence[str],
    observed: Sequence[str],
    *,
    epsilon: float,
    disclosure: str = "both",
    max_suppressed: float = 0.05,
    hierarchies: Mapping[str, str | Path | Hierarchy] | None = None,
    useful: str | None = None,
    local: bool = True,
    folds: int = 5,
    held_out_tolerance: float = 0.05,
    frontier_epsilons: Sequence[float] | None = None,
    suggest: bool = True,
    confidence: float | None = None,
    counts_column: str | None = None,
    max_nodes: int = 200,
    rng: int = 0,
) -> ReleaseResult:
    """Search the most informative release of ``frame`` that meets epsilon-lift privacy.

    Global recoding over the lattice of hierarchy levels (best-first, pruned on information,
    see :mod:`privwatch.release._search`), then local recoding of its cells
    (:mod:`privwatch.release._local`); the better of the two is released. Every released cell,
    the suppressed cell included, meets epsilon exactly on the fitted data (verified). With
    ``folds >= 2`` the whole procedure is cross-fitted and the guarantee measured on held-out
    records (:mod:`privwatch.release._heldout`).

    The result is ``satisfied=False`` (and a :class:`ReleaseNotMetWarning` is raised) when the
    best release keeps no information (every record ends in one cell), or when the held-out
    breach probability's 95 % interval lies above ``held_out_tolerance``; with ``suggest`` it
    then names the nearest feasible alternatives (each one searched and checked the same way).
    ``confidence`` (e.g. 0.9) makes the search demand that every cell also pass with the
    credible bounds of its sensitive shares (:class:`~privwatch.release.LiftBox`): smaller cells
    need a margin, which trades information for a guarantee that holds on held-out records.
    ``max_nodes`` caps the lattice nodes the global search evaluates per search (the lattice
    grows as the product of the columns' level counts); ``release.search_complete`` says
    whether the cap was reached, in which case the global recoding is the best found, not
    proven best (the release is valid either way).
    ``counts_column`` names a column of record counts: ``frame`` is then a count table (one row
    per observed tuple, sensitive value and, with ``folds``, a ``fold`` column), such as
    :func:`privwatch.engines.count_table` returns from pandas, Polars, DuckDB, Spark or a
    database, and the release is labelled back onto the records with
    :func:`privwatch.engines.label_records` and :attr:`ReleaseResult.mapping`.
    ``frontier_epsilons`` (default: 0.25, 0.5, 1, 2, 3 and ``epsilon``) are the points of
    the frontier of epsilon against information kept and records suppressed.

    Examples
    --------
    >>> df = pd.DataFrame({"s": list("ab") * 50, "x": list("pq") * 25 + list("qp") * 25})
    >>> r = find_release(df, "s", ["x"], epsilon=0.5, folds=0)
    >>> r.satisfied, r.max_log_lift <= 0.5
    (True, True)
    """
    options = SearchOptions(
        epsilon=epsilon,
        disclosure=disclosure,
        max_suppressed=max_suppressed,
        local=local,
        confidence=confidence,
        max_nodes=max_nodes,
        useful=useful,
    )
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    _check_folds(folds)
    check_probability(held_out_tolerance, "held_out_tolerance")
    missing_cols = [
        c for c in [*sens, *observed, *([useful] if useful else [])] if c not in frame.columns
    ]
    if missing_cols:
        raise ValidationError(f"columns {missing_cols} are not in the data.")
    if len(frame) == 0:
        raise ValidationError("the data must have at least one record; got none.")
    weights = None
    n_folds = max(folds, 1)
    if counts_column is not None:  # a count table (one row per tuple, value and fold)
        weights = frame[counts_column].to_numpy(dtype=float)
        if folds >= 2 and "fold" not in frame.columns:
            raise ValidationError("a count table needs a 'fold' column for the held-out check.")
        fold = frame["fold"].to_numpy(dtype=np.int64) if folds >= 2 else np.zeros(len(frame), int)
        if folds >= 2 and (fold.min() < 0 or fold.max() >= folds):
            raise ValidationError(f"the count table's folds must lie in 0..{folds - 1}.")
    else:
        # the same fold of a row position as every engine computes (engines.fold_of)
        fold = (
            fold_of(np.arange(len(frame)), n_folds, rng)
            if n_folds >= 2
            else np.zeros(len(frame), dtype=np.int64)
        )
    hier = build_hierarchies(frame, observed, hierarchies, weights=weights)
    table, row_of = CountTable.from_frame(
        frame, sens, observed, hier, folds=fold, n_folds=n_folds, useful=useful, weights=weights
    )
    space = ReleaseSpace(table, hier)
    total = table.total()
    fitter = _Fitter(space, table, options)
    plan, info_global, info_local, evaluated, node = fitter.fit(total)
    box = fitter.box
    cell_of, n_cells = release_cells(space, plan)
    ct = cell_counts(cell_of, n_cells, total)
    worst_cells = box.worst(ct)
    if worst_cells.max() > epsilon + 1e-9:  # never ship a release that breaks its promise
        raise PrivwatchError(
            f"internal error: the searched release breaks epsilon ({worst_cells.max():.6g} > "
            f"{epsilon}); please report it."
        )
    by_group = box.worst_by_group(ct).max(0)
    names = ["joint" if len(sens) > 1 else sens[0], *(sens if len(sens) > 1 else [])]
    value = information(space, cell_of, n_cells, total)
    zero = np.zeros(space.table.codes.shape, dtype=np.int64)
    info_input = information(space, *group_rows(space.keys(zero)), total)
    held = None
    if folds >= 2:
        held = held_out_check(space, table, fitter.plan, box, rng=np.random.default_rng(rng))
    per_tuple = _per_tuple(space, plan, total, box, epsilon)
    released = per_tuple[list(observed)].iloc[row_of].reset_index(drop=True)
    records = per_tuple.drop(columns=list(observed)).iloc[row_of].reset_index(drop=True)
    first = first_rows(row_of, len(per_tuple))
    original = frame[list(observed)].iloc[first].reset_index(drop=True)
    mapping = pd.concat([original, per_tuple.add_prefix("release_")], axis=1).drop_duplicates(
        subset=list(observed)
    )
    suppressed = round(total[plan.suppressed].sum())
    reasons: list[str] = []
    if value <= 1e-9:
        reasons.append(
            f"no release within `max_suppressed`={max_suppressed:g} keeps any information at "
            f"epsilon {epsilon:g} ({disclosure}): every record would be released as '*'"
        )
    if held is not None and held.breach_probability_ci[0] > held_out_tolerance:
        reasons.append(
            f"on held-out records the release breaks epsilon for {held.breach_probability:.1%} "
            f"of them (95 % interval {held.breach_probability_ci[0]:.1%}-"
            f"{held.breach_probability_ci[1]:.1%}), above the tolerance {held_out_tolerance:.0%}"
        )
    grid = frontier_epsilons
    if grid is None:
        grid = sorted({0.25, 0.5, 1.0, 2.0, 3.0, float(epsilon)})
    frontier = _frontier(
        space,
        table,
        total,
        grid,
        options,
        known=(options.epsilon, (plan, info_global, info_local, evaluated, node)),
    )
    alternatives: list[str] = []
    if not suggest:
        pass
    elif value <= 1e-9:
        alternatives = _alternatives(space, table, total, options, frontier)
    elif reasons and held is not None:
        alternatives = _held_out_alternatives(space, table, options, held_out_tolerance, rng)
    result = ReleaseResult(
        satisfied=not reasons,
        reasons=reasons,
        alternatives=alternatives,
        epsilon=float(epsilon),
        disclosure=disclosure,
        max_suppressed=float(max_suppressed),
        method=plan.kind,
        generalisation=_generalisation(space, plan, node),
        information_nats=value,
        information_global_nats=info_global,
        information_local_nats=info_local,
        information_input_nats=info_input,
        suppressed_records=suppressed,
        perturbed_records=0,
        n_records=table.n_records,
        max_log_lift=float(worst_cells.max()),
        max_log_lift_by_attribute={k: float(v) for k, v in zip(names, by_group, strict=True)},
        held_out=held,
        frontier=frontier,
        nodes_evaluated=evaluated,
        search_complete=evaluated < max_nodes,
        released=released,
        records=records,
        hierarchies=hier,
        mapping=mapping,
    )
    if reasons:
        warnings.warn("; ".join(reasons), ReleaseNotMetWarning, stacklevel=2)
    return result


def _generalisation(space: ReleaseSpace, plan: Plan, node: tuple[int, ...]) -> dict[str, Any]:
    cols = space.table.observed
    if plan.kind == "global":
        return {
            c: {"level": int(node[j]), "levels": int(space.n_levels[j])} for j, c in enumerate(cols)
        }
    out: dict[str, Any] = {}
    for j, c in enumerate(cols):
        levels, counts = np.unique(plan.levels[:, j], return_counts=True)
        out[c] = {
            "levels": int(space.n_levels[j]),
            "tuples_at_level": {int(lv): int(k) for lv, k in zip(levels, counts, strict=True)},
        }
    return out


def _per_tuple(
    space: ReleaseSpace,
    plan: Plan,
    total: np.ndarray,
    box: LiftBox,
    epsilon: float,
) -> pd.DataFrame:
    """Per tuple row: released labels, risk before generalisation, flag, suppression, the
    released cell's log-lift, and the column whose generalisation lowers the risk most."""
    cols = space.table.observed
    labels = space.labels(space.keys(plan.levels, plan.suppressed))
    m = len(cols)
    base = np.zeros((total.shape[0], m), dtype=np.int64)
    base_cell, nb = group_rows(space.keys(base))
    risk_row = box.worst(cell_counts(base_cell, nb, total))[base_cell]
    best_col = np.full(total.shape[0], "", dtype=object)
    best_risk = risk_row.copy()
    for j, c in enumerate(cols):
        if space.n_levels[j] < 2:
            continue
        lv = base.copy()
        lv[:, j] = 1
        cell, k = group_rows(space.keys(lv))
        r = box.worst(cell_counts(cell, k, total))[cell]
        better = r < best_risk - 1e-12
        best_col[better] = c
        best_risk = np.where(better, r, best_risk)
    rel_cell, nr = release_cells(space, plan)
    rel_worst = box.worst(cell_counts(rel_cell, nr, total))[rel_cell]
    flagged = risk_row > epsilon + 1e-12
    out = pd.DataFrame({c: np.asarray(labels[j], dtype=object) for j, c in enumerate(cols)})
    out["risk"] = risk_row
    out["flagged"] = flagged
    out["suppressed"] = plan.suppressed
    out["released_cell_log_lift"] = rel_worst
    out["advice_column"] = np.where(flagged, best_col, "")
    out["advice_risk"] = np.where(flagged, best_risk, np.nan)
    return out


def _frontier(
    space: ReleaseSpace,
    table: CountTable,
    total: np.ndarray,
    grid: Sequence[float],
    options: SearchOptions,
    known: tuple[float, tuple[Plan, float, float | None, int, tuple[int, ...]]] | None = None,
) -> list[dict[str, Any]]:
    """One point per epsilon of ``grid``: the release at that epsilon with the user's options."""
    out = []
    for eps in grid:
        if known is not None and float(eps) == known[0]:  # the release itself: no second search
            plan, info_g, info_l, _, _ = known[1]
        else:
            f = _Fitter(space, table, options.replace(epsilon=float(eps)))
            plan, info_g, info_l, _, _ = f.fit(total)
        out.append(
            {
                "epsilon": float(eps),
                "information_nats": information(space, *release_cells(space, plan), total),
                "information_global_nats": info_g,
                "information_local_nats": info_l,
                "suppressed_share": float(total[plan.suppressed].sum() / total.sum()),
                "method": plan.kind,
            }
        )
    return out


def _held_out_alternatives(
    space: ReleaseSpace,
    table: CountTable,
    options: SearchOptions,
    tolerance: float,
    rng: int,
) -> list[str]:
    """Settings whose held-out breach is lower: a larger epsilon, or one-sided disclosure;
    every other option is the user's."""
    tries = [options.replace(epsilon=options.epsilon * f) for f in (1.5, 2.0, 3.0)]
    if options.disclosure == "both":
        tries.insert(0, options.replace(disclosure="positive"))
    out = []
    for tried in tries:
        eps, disc = tried.epsilon, tried.disclosure
        f = _Fitter(space, table, tried)
        held = held_out_check(space, table, f.plan, f.box, rng=np.random.default_rng(rng))
        value = information(space, *release_cells(space, f.plan(table.total())), table.total())
        lo, hi = held.breach_probability_ci
        verdict = "within" if lo <= tolerance else "still above"
        out.append(
            f"epsilon {eps:g} with `disclosure`='{disc}': keeps {value:.2f} nats; held-out "
            f"breach {held.breach_probability:.1%} (95 % {lo:.1%}-{hi:.1%}), {verdict} "
            f"the tolerance"
        )
    return out


def _alternatives(
    space: ReleaseSpace,
    table: CountTable,
    total: np.ndarray,
    options: SearchOptions,
    frontier: list[dict[str, Any]],
) -> list[str]:
    """For a release that keeps nothing: a larger epsilon, a larger suppression limit, or
    one-sided disclosure; every other option is the user's."""
    epsilon = options.epsilon
    out = []
    ok = [p for p in frontier if p["information_nats"] > 1e-9]
    if ok:
        p = min(ok, key=lambda q: q["epsilon"])
        out.append(
            f"raise epsilon to {p['epsilon']:g}: keeps {p['information_nats']:.2f} nats "
            f"with {p['suppressed_share']:.1%} of the records suppressed"
        )
    for share in (0.1, 0.2, 0.3, 0.5):
        if share <= options.max_suppressed:
            continue
        plan = _Fitter(space, table, options.replace(max_suppressed=share)).plan(total)
        value = information(space, *release_cells(space, plan), total)
        if value > 1e-9:
            out.append(
                f"allow `max_suppressed`={share:g}: keeps {value:.2f} nats at epsilon {epsilon:g}"
            )
            break
    if options.disclosure == "both":
        plan = _Fitter(space, table, options.replace(disclosure="positive")).plan(total)
        value = information(space, *release_cells(space, plan), total)
        out.append(
            f"use `disclosure`='positive' (beliefs may not grow by more than e^epsilon): "
            f"keeps {value:.2f} nats at epsilon {epsilon:g}"
        )
    return out
