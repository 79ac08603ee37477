"""The records of a release request counted: held-out folds, hierarchies, the count table.

Everything the search needs from the data is one count per (observed tuple, sensitive value,
fold) (:class:`~privwatch.release.cells.CountTable`) and the labels each tuple can be released
as (:class:`~._global_recoding.ReleaseSpace`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ...engines import fold_of
from ...exceptions import ValidationError
from ..cells import CountTable
from ..hierarchies import Hierarchy, KeyCodes, build_hierarchies
from ._global_recoding import FloatArray, IntArray, ReleaseSpace
from ._options import SearchOptions

__all__ = ["count_space", "record_folds"]


def record_folds(
    frame: pd.DataFrame, folds: int, counts_column: str | None, rng: int
) -> tuple[IntArray, FloatArray | None]:
    """The held-out fold of every row and, for a count table, its record count.

    Records get the fold of their row position that every engine computes
    (:func:`privwatch.engines.fold_of`); a count table brings its own ``fold`` column.

    A count table's counts are read as floats and may be fractional (weights, e.g. a known
    pmf p(s, x) x N, as ``benchmarks/bench_oracle.py`` searches it): without folds and without
    a credible margin the search uses them only through shares p(s | y), entropies, the
    suppressed share and the minimum class size. The held-out model and the credible margins
    read them as numbers of records, so a held-out check needs record counts.
    """
    if counts_column is None:
        if folds < 2:
            return np.zeros(len(frame), dtype=np.int64), None
        return np.asarray(fold_of(np.arange(len(frame)), folds, rng), dtype=np.int64), None
    weights = frame[counts_column].to_numpy(dtype=float)
    if folds < 2:
        return np.zeros(len(frame), dtype=np.int64), weights
    if "fold" not in frame.columns:
        raise ValidationError("a count table needs a 'fold' column for the held-out check.")
    fold = frame["fold"].to_numpy(dtype=np.int64)
    if fold.min() < 0 or fold.max() >= folds:
        raise ValidationError(f"the count table's folds must lie in 0..{folds - 1}.")
    return fold, weights


def count_space(
    frame: pd.DataFrame,
    sensitive: Sequence[str],
    observed: Sequence[str],
    hierarchies: Mapping[str, str | Path | Hierarchy] | None,
    options: SearchOptions,
    folds: int,
    counts_column: str | None,
    rng: int,
    keys: KeyCodes | None = None,
) -> tuple[ReleaseSpace, IntArray]:
    """The release space of ``frame`` and each row's tuple row in its count table.

    ``folds`` < 2: one fold; ``counts_column``: ``frame`` is a count table with that column of
    record counts; with ``options.useful``, each tuple row is one (observed tuple, useful value)
    pair. ``keys``: ``frame``'s key columns factorised once for every reader (the engine
    route's count table, :class:`~privwatch.release.hierarchies.KeyCodes`); the same codes.
    """
    keys = keys if keys is not None and keys.frame is frame else None
    fold, weights = record_folds(frame, folds, counts_column, rng)
    hier = build_hierarchies(frame, observed, hierarchies, weights=weights, keys=keys)
    table, row_of = CountTable.from_frame(
        frame,
        sensitive,
        observed,
        hier,
        folds=fold,
        n_folds=max(folds, 1),
        useful=options.useful,
        weights=weights,
        keys=keys,
    )
    return ReleaseSpace(table, hier), row_of
