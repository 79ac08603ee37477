"""One streaming pass over a source: the sensitive prior and the preprocessing statistics.

What :class:`~privwatch.estimators.TabularPreprocessor` and the prior would compute on the whole
table, accumulated slice by slice: per sensitive value its count, per numeric observed column
its count, mean and sum of squared deviations (merged with Chan, Golub and LeVeque's pairwise
update), per other observed column its set of values. Memory: one slice plus the statistics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ._preprocess import TabularPreprocessor
from ._progress import progress_bar
from ._stream_source import SourceReader

__all__ = ["SourceStatistics", "scan_statistics"]


@dataclass
class _Moments:
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, values: np.ndarray[Any, Any]) -> None:
        """Chan et al.'s merge of this slice's count, mean and squared deviations."""
        k = len(values)
        if k == 0:
            return
        mean_b = float(values.mean())
        m2_b = float(np.sum((values - mean_b) ** 2))
        n = self.n + k
        delta = mean_b - self.mean
        self.mean = self.mean + delta * k / n if self.n else mean_b
        self.m2 = self.m2 + m2_b + delta * delta * self.n * k / n if self.n else m2_b
        self.n = n


@dataclass
class SourceStatistics:
    """Counts per sensitive value and the observed columns' statistics of a whole source."""

    n_records: int = 0
    sensitive_counts: Counter[Any] = field(default_factory=Counter)
    moments: dict[str, _Moments] = field(default_factory=dict)
    levels: dict[str, set[str]] = field(default_factory=dict)
    missing: Counter[str] = field(default_factory=Counter)

    def labels(self, sensitive: str) -> list[Any]:
        """The sensitive values in sorted order (at least two)."""
        try:
            labels = sorted(self.sensitive_counts)
        except TypeError:
            raise ValidationError(
                f"`{sensitive}` must hold values of one type that sort; got "
                f"{sorted({type(v).__name__ for v in self.sensitive_counts})}."
            ) from None
        if len(labels) < 2:
            raise ValidationError(
                f"`sensitive` must take at least two values; got {labels!r} in {sensitive!r}."
            )
        return labels

    def prior(self, labels: list[Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
        counts = np.asarray([self.sensitive_counts[v] for v in labels], dtype=np.float64)
        return np.asarray(counts / counts.sum(), dtype=np.float64)

    def preprocessor(self, observed: list[str]) -> TabularPreprocessor:
        """The fitted preprocessor these statistics define (standard deviation 0 -> scale 1)."""
        numeric = {}
        for c, m in self.moments.items():
            std = float(np.sqrt(m.m2 / m.n))
            numeric[c] = (m.mean, std if std > 0 else 1.0)
        categories = {c: sorted(v) for c, v in self.levels.items()}
        return TabularPreprocessor.from_dict(
            {"columns": list(observed), "numeric": numeric, "categories": categories}
        )


def scan_statistics(
    reader: SourceReader,
    sensitive: str,
    observed: list[str],
    *,
    progress: bool = False,
    left_out: Callable[[int, int], np.ndarray[Any, np.dtype[np.bool_]]] | None = None,
) -> SourceStatistics:
    """Read ``reader`` once and accumulate the statistics; missing values are an error naming
    the columns and how many records lack them (counted over the whole source). Rows that
    ``left_out(start, n)`` marks (a held-out fold) are checked for missing values but not
    counted."""
    stats = SourceStatistics()
    for c in observed:
        if reader.kinds[c] == "numeric":
            stats.moments[c] = _Moments()
        else:
            stats.levels[c] = set()
    n_slices = max(1, -(-reader.n_rows // reader.read_rows))
    with progress_bar(progress, "statistics of the source", n_slices) as advance:
        for start, frame in reader.scan():
            for c in [sensitive, *observed]:  # over every record, left out or not
                holes = int(frame[c].isna().sum())
                if holes:
                    stats.missing[c] += holes
            if stats.missing:
                advance()
                continue
            if left_out is not None:
                frame = frame[~left_out(start, len(frame))]
            stats.n_records += len(frame)
            counts = frame[sensitive].value_counts(sort=False)
            for value, count in zip(counts.index.tolist(), counts.to_numpy().tolist(), strict=True):
                stats.sensitive_counts[value] += int(count)
            for c, m in stats.moments.items():
                m.add(frame[c].to_numpy(dtype=np.float64))
            for c, lv in stats.levels.items():
                lv.update(pd.unique(frame[c].astype(str)).tolist())
            advance()
    if stats.missing:
        raise ValidationError(
            "the columns of `source` must have no missing values; got "
            f"{dict(stats.missing)} (records per column)."
        )
    return stats
