"""A source streamed in batches for a neural log-lift estimator: the statistics pass before a
fit, and the scoring of a source batch by batch.

The fit's memory is the network, one slice of records, the shuffle buffer and the validation
records (at most about ``max_validation_rows``; :mod:`._stream_training`): none of them grows
with the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..engines import ROW_COLUMN, fold_of
from ..exceptions import ValidationError
from ._lift import FloatArray, risk_of
from ._preprocess import TabularPreprocessor
from ._stream_source import SourceReader, check_columns
from ._stream_stats import scan_statistics

__all__ = ["ScannedSource", "fold_mask", "scan_source", "score_batches"]

BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


def fold_mask(
    leave_out_fold: tuple[int, int, int] | None,
) -> Callable[[int, int], BoolArray] | None:
    """``mask(start, n)``, True for the rows of fold ``k`` of ``(folds, seed, k)``
    (:func:`privwatch.engines.fold_of` of the row positions); None for no fold."""
    if leave_out_fold is None:
        return None
    if not (isinstance(leave_out_fold, tuple) and len(leave_out_fold) == 3):
        raise ValidationError(
            f"`leave_out_fold` must be a tuple (folds, seed, k); got {leave_out_fold!r}."
        )
    folds, seed, k = leave_out_fold
    fold_of(np.zeros(1, dtype=np.int64), folds, seed)  # validates folds and seed
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 0 <= k < folds:
        raise ValidationError(f"the fold `k` must be an integer in [0, {folds}); got {k!r}.")

    def mask(start: int, n: int) -> BoolArray:
        return np.asarray(fold_of(np.arange(start, start + n, dtype=np.int64), folds, seed) == k)

    return mask


@dataclass(frozen=True)
class ScannedSource:
    """A source after the statistics pass of a streamed fit: its reader, the records it
    holds outside the left-out fold, the sensitive labels, their prior and the preprocessing
    of the observed columns."""

    reader: SourceReader
    sensitive: str
    left_out: Callable[[int, int], BoolArray] | None
    n_records: int
    labels: list[Any]
    prior: FloatArray
    preprocessor: TabularPreprocessor

    def encode(self, frame: pd.DataFrame) -> tuple[Any, Any]:
        """(features, sensitive codes) of ``frame`` as NumPy arrays."""
        codes = pd.Index(self.labels).get_indexer(pd.Index(frame[self.sensitive]))
        if (codes < 0).any():  # only if the source changed between the passes
            raise ValidationError(
                f"`{self.sensitive}` must take the values of the statistics pass "
                f"{list(self.labels)}; the source changed while it was read."
            )
        features = self.preprocessor.transform(frame[list(self.preprocessor.columns_)])
        return features, np.asarray(codes, dtype=np.int64)


def scan_source(
    source: Any,
    sensitive: str,
    observed: Sequence[str],
    read_rows: int,
    progress: bool,
    leave_out_fold: tuple[int, int, int] | None,
) -> ScannedSource:
    """One pass over ``source`` (see :meth:`NeuralLift.fit_source`): the prior of the
    sensitive values and the preprocessing, from the records outside ``leave_out_fold``."""
    sensitive, obs = check_columns(sensitive, observed)
    reader = SourceReader(source, [sensitive, *obs], read_rows)
    left_out = fold_mask(leave_out_fold)
    stats = scan_statistics(reader, sensitive, obs, progress=progress, left_out=left_out)
    if stats.n_records == 0:
        raise ValidationError("`source` must hold records outside the left-out fold; got none.")
    labels = stats.labels(sensitive)
    return ScannedSource(
        reader,
        sensitive,
        left_out,
        stats.n_records,
        labels,
        stats.prior(labels),
        stats.preprocessor(obs),
    )


def score_batches(
    log_lift: Callable[[pd.DataFrame], FloatArray],
    columns: list[str],
    labels: list[Any],
    source: Any,
    keep: Sequence[str] = (),
    read_rows: int = 65_536,
) -> Iterator[pd.DataFrame]:
    """The frames of :meth:`NeuralLift.score_batches`: ``log_lift`` of the ``columns`` of each
    batch of ``source``, with ``labels`` the sensitive values (its columns)."""
    if isinstance(keep, str) or not all(isinstance(c, str) for c in keep):
        raise ValidationError(f"`keep` must be a list of column names; got {keep!r}.")
    taken = {ROW_COLUMN, "risk", *(f"log_lift[{label}]" for label in labels)}
    if taken & set(keep) or len(set(keep)) != len(keep):
        raise ValidationError(
            f"`keep` must name distinct columns other than {sorted(taken)}; got {list(keep)!r}."
        )
    extra = [c for c in keep if c not in columns]
    reader = SourceReader(source, [*columns, *extra], read_rows)
    for start, frame in reader.scan():
        ll = log_lift(frame[columns])
        data: dict[str, Any] = {ROW_COLUMN: np.arange(start, start + len(frame), dtype=np.int64)}
        data.update({c: frame[c].to_numpy() for c in keep})
        data["risk"] = risk_of(ll)
        for j, label in enumerate(labels):
            data[f"log_lift[{label}]"] = ll[:, j]
        yield pd.DataFrame(data)
