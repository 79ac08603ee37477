"""The per-tuple table of a release, and the per-record tables labelled from it.

One row per distinct observed tuple: its released labels, its risk before generalisation, whether
it is flagged, whether it is suppressed, the log-lift of the cell it is released in, and the
column whose one-level generalisation lowers its risk the most (the advice). Records take the
row of their tuple.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..cells import LiftBox, cell_counts, first_rows, group_rows
from ._global_recoding import FloatArray, IntArray, Plan, ReleaseSpace, release_cells

__all__ = ["per_tuple_table", "record_tables", "unique_records"]


def per_tuple_table(
    space: ReleaseSpace, plan: Plan, total: FloatArray, box: LiftBox
) -> pd.DataFrame:
    """Per tuple row: released labels, ``risk`` before generalisation, ``flagged`` (risk above
    epsilon), ``suppressed``, ``released_cell_log_lift`` and, for flagged tuples, the
    ``advice_column`` whose generalisation lowers the risk most with the ``advice_risk`` left."""
    cols = space.table.observed
    labels = space.labels(space.keys(plan.levels, plan.suppressed))
    base = np.zeros((total.shape[0], len(cols)), dtype=np.int64)
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
    flagged = risk_row > box.epsilon + 1e-12
    out = pd.DataFrame({c: np.asarray(labels[j], dtype=object) for j, c in enumerate(cols)})
    out["risk"] = risk_row
    out["flagged"] = flagged
    out["suppressed"] = plan.suppressed
    out["released_cell_log_lift"] = rel_worst
    out["advice_column"] = np.where(flagged, best_col, "")
    out["advice_risk"] = np.where(flagged, best_risk, np.nan)
    return out


def unique_records(space: ReleaseSpace, plan: Plan, counts: FloatArray) -> int:
    """How many records the release ``plan`` leaves unique: alone in their released cell (k = 1).

    The cell is the released observed tuple; the suppressed cell (``*`` in every column) is not
    counted, since it tells nothing of its records' observed values, the rule
    ``min_class_size`` follows too. ``counts`` are the records per tuple row (and sensitive
    value), e.g. ``space.table.total()``; a cell holds one record when its count rounds to 1.

    Examples
    --------
    >>> from privwatch.release.cells import CountTable
    >>> from privwatch.release import auto_hierarchy
    >>> df = pd.DataFrame({"x": list("aabcc"), "s": list("01010")})
    >>> hier = {"x": auto_hierarchy(df["x"], "x")}
    >>> table, _ = CountTable.from_frame(df, ["s"], ["x"], hier)
    >>> space = ReleaseSpace(table, hier)
    >>> plan = space.plan(np.zeros((3, 1), dtype=np.int64), np.zeros(3, dtype=bool))
    >>> unique_records(space, plan, table.total())  # x = "b" is alone
    1
    """
    cell_of, n_cells = release_cells(space, plan)
    per_row = np.asarray(counts, dtype=float).reshape(counts.shape[0], -1).sum(1)
    size = cell_counts(cell_of, n_cells, per_row)
    star = cell_counts(cell_of, n_cells, plan.suppressed.astype(float)) > 0
    alone = (np.rint(size) == 1) & ~star
    return int(np.rint(size[alone].sum()))


def record_tables(
    frame: pd.DataFrame, observed: Sequence[str], per_tuple: pd.DataFrame, row_of: IntArray
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(released, records, mapping)``: per record (input order) its released observed values,
    and its risk, flags and advice; per observed tuple its input values beside the released
    ones prefixed ``release_`` (what an engine joins to label its records)."""
    cols = list(observed)
    released = per_tuple[cols].iloc[row_of].reset_index(drop=True)
    records = per_tuple.drop(columns=cols).iloc[row_of].reset_index(drop=True)
    first = first_rows(row_of, len(per_tuple))
    original = frame[cols].iloc[first].reset_index(drop=True)
    mapping = pd.concat([original, per_tuple.add_prefix("release_")], axis=1)
    return released, records, mapping.drop_duplicates(subset=cols)
