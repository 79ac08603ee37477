"""The watchdog's plug-in units: the records counted per observed tuple, with held-out folds.

One row per distinct observed tuple (its values coded per column in sorted order), one count
per (tuple, joint sensitive value, fold): the :class:`~privwatch.release.cells.CountTable` the
held-out model of the search is fitted on. Records get the fold of their row position
(:func:`privwatch.engines.fold_of`), as the search's records do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...engines import fold_of
from ..cells import CountTable, LiftBox, first_rows, group_rows
from ..hierarchies import as_text

__all__ = ["TupleUnits"]


@dataclass(frozen=True)
class TupleUnits:
    """The records of ``observed`` counted per tuple.

    ``table``: the count table (rows: tuples); ``row_of``: each record's tuple row;
    ``tuples``: each tuple's observed values as text (the saved mechanism's keys)."""

    table: CountTable
    row_of: np.ndarray
    tuples: pd.DataFrame

    @classmethod
    def count(
        cls,
        frame: pd.DataFrame,
        sensitive: Sequence[str],
        observed: Sequence[str],
        folds: int,
        rng: int,
    ) -> TupleUnits:
        """Count ``frame`` (the records, one per row) per observed tuple and sensitive value;
        ``folds`` < 2: one fold (no held-out check)."""
        obs = list(observed)
        text = pd.DataFrame({c: as_text(frame[c].reset_index(drop=True)) for c in obs})
        codes = np.stack(
            [pd.factorize(text[c], sort=True)[0].astype(np.int64) for c in obs], axis=1
        ) if obs else np.zeros((len(frame), 0), dtype=np.int64)  # fmt: skip
        row_of, n_rows = group_rows(codes)
        rows = codes[first_rows(row_of, n_rows)]
        order = np.lexsort(rows.T[::-1]) if obs else np.arange(n_rows)
        rank = np.empty(n_rows, dtype=np.int64)
        rank[order] = np.arange(n_rows)
        rows, row_of = rows[order], rank[row_of]
        sens = frame[list(sensitive)].astype(str)
        s_codes, s_uniques = pd.factorize(pd.MultiIndex.from_frame(sens), sort=True)
        n_folds = max(folds, 1)
        fold = (
            np.asarray(fold_of(np.arange(len(frame)), folds, rng), dtype=np.int64)
            if folds >= 2
            else np.zeros(len(frame), dtype=np.int64)
        )
        counts = np.zeros((n_rows, len(s_uniques), n_folds))
        np.add.at(counts, (row_of, s_codes, fold), 1.0)
        table = CountTable(
            tuple(obs),
            tuple(sensitive),
            rows,
            counts,
            [tuple(str(x) for x in v) for v in s_uniques],
        )
        first = first_rows(row_of, n_rows)
        tuples = text.iloc[first].reset_index(drop=True)
        return cls(table, row_of, tuples)

    @property
    def n_folds(self) -> int:
        return int(self.table.counts.shape[2])

    def box(self, epsilon: float, disclosure: str, confidence: float | None = None) -> LiftBox:
        """The lift test at ``epsilon`` with the table's prior (``confidence``: a margin)."""
        total = self.table.total()
        return LiftBox(
            total.sum(0), self.table.marginals(), epsilon, disclosure, confidence=confidence
        )
