"""Fit a neural log-lift estimator from a source streamed in batches, and score one the same way.

The estimator's memory is the network, one slice of records, the shuffle buffer and the
validation records (at most about ``max_validation_rows``): none of them grows with the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._device import resolve_device
from .._rng import check_rng
from .._validation import check_positive_int
from ..engines import ROW_COLUMN, fold_of, write_parquet_frames
from ..exceptions import ValidationError
from ._base import risk_of
from ._stream_source import SourceReader, check_columns
from ._stream_stats import scan_statistics

if TYPE_CHECKING:
    from ._neural import NeuralLift

__all__ = ["fit_from_source", "fold_mask", "score_batches", "write_scores"]


def _encoder(est: NeuralLift, sensitive: str) -> Any:
    labels = pd.Index(est.sensitive_labels_)
    columns = list(est.preprocessor_.columns_)

    def encode(frame: pd.DataFrame) -> tuple[Any, Any]:
        codes = labels.get_indexer(pd.Index(frame[sensitive]))
        if (codes < 0).any():  # only if the source changed between the passes
            raise ValidationError(
                f"`{sensitive}` must take the values of the statistics pass "
                f"{list(labels)}; the source changed while it was read."
            )
        return est.preprocessor_.transform(frame[columns]), np.asarray(codes, dtype=np.int64)

    return encode


def fold_mask(
    leave_out_fold: tuple[int, int, int] | None,
) -> Callable[[int, int], np.ndarray[Any, np.dtype[np.bool_]]] | None:
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

    def mask(start: int, n: int) -> np.ndarray[Any, np.dtype[np.bool_]]:
        return np.asarray(fold_of(np.arange(start, start + n, dtype=np.int64), folds, seed) == k)

    return mask


def fit_from_source(
    est: NeuralLift,
    source: Any,
    sensitive: str,
    observed: Sequence[str],
    *,
    read_rows: int,
    shuffle_rows: int,
    max_validation_rows: int,
    leave_out_fold: tuple[int, int, int] | None = None,
) -> NeuralLift:
    """See :meth:`NeuralLift.fit_source`."""
    from .._torch import generator_from, mlp, seeded_global_rng, torch
    from ._neural_training import train_member
    from ._stream_training import RowSplit, StreamLiftTrainer, TrainingStream, collect_validation

    est._check()
    est._check_streamable()
    sensitive, obs = check_columns(sensitive, observed)
    check_positive_int(shuffle_rows, "shuffle_rows")
    check_positive_int(max_validation_rows, "max_validation_rows")
    dev = resolve_device(est.device)
    reader = SourceReader(source, [sensitive, *obs], read_rows)
    left_out = fold_mask(leave_out_fold)
    stats = scan_statistics(reader, sensitive, obs, progress=bool(est.progress), left_out=left_out)
    if stats.n_records == 0:
        raise ValidationError("`source` must hold records outside the left-out fold; got none.")
    est.sensitive_labels_ = stats.labels(sensitive)
    est.prior_ = stats.prior(est.sensitive_labels_)
    est.preprocessor_ = stats.preprocessor(obs)
    est._log_prior = torch.as_tensor(np.log(est.prior_), dtype=torch.float32, device=dev)
    encode = _encoder(est, sensitive)
    threshold = min(float(est.validation_fraction), max_validation_rows / stats.n_records)
    g = check_rng(est.rng)
    est.models_, est.histories_, est.best_epochs_ = [], [], []
    est.validation_sizes_ = []
    est._init_members()
    for k in range(est.n_ensemble):  # each member has its own validation split
        split = RowSplit(int(g.integers(0, 2**62)), threshold, left_out)
        x_val, s_val = collect_validation(reader, split, encode, dev)
        if len(s_val) == 0 or len(s_val) == stats.n_records:
            raise ValidationError(
                f"`source` must have records both to train on and to validate on; its "
                f"{stats.n_records} records gave {len(s_val)} validation records (raise "
                "`validation_fraction` or use more records)."
            )
        est.validation_sizes_.append(len(s_val))
        stream = TrainingStream(
            reader,
            encode,
            split,
            batch_size=est.batch_size,
            shuffle_rows=shuffle_rows,
            order_rng=np.random.default_rng(int(g.integers(0, 2**62))),
            device=dev,
        )
        gen = generator_from(g, dev)
        with seeded_global_rng(int(g.integers(0, 2**62)), dev):
            model = mlp(
                est.preprocessor_.n_features_, est.hidden, est._n_outputs(), est.dropout,
                est.activation,
            ).to(dev)  # fmt: skip
            history, best = train_member(
                est,
                model,
                stream,
                (x_val, s_val),
                generator=gen,
                description=f"{type(est).__name__} {k + 1}/{est.n_ensemble} (streamed)",
                trainer_cls=StreamLiftTrainer,
            )
        est.histories_.append(history)
        est.best_epochs_.append(best)
        est.models_.append(model)
        est._after_fit(k, x_val, s_val)
    return est


def score_batches(
    est: NeuralLift, source: Any, *, keep: Sequence[str] = (), read_rows: int = 65_536
) -> Iterator[pd.DataFrame]:
    """See :meth:`NeuralLift.score_batches`."""
    from .._base import check_is_fitted

    check_is_fitted(est, "models_")
    columns = list(est.preprocessor_.columns_)
    if isinstance(keep, str) or not all(isinstance(c, str) for c in keep):
        raise ValidationError(f"`keep` must be a list of column names; got {keep!r}.")
    taken = {ROW_COLUMN, "risk", *(f"log_lift[{label}]" for label in est.sensitive_labels_)}
    if taken & set(keep) or len(set(keep)) != len(keep):
        raise ValidationError(
            f"`keep` must name distinct columns other than {sorted(taken)}; got {list(keep)!r}."
        )
    extra = [c for c in keep if c not in columns]
    reader = SourceReader(source, [*columns, *extra], read_rows)
    for start, frame in reader.scan():
        ll = est.log_lift(frame[columns])
        data: dict[str, Any] = {ROW_COLUMN: np.arange(start, start + len(frame), dtype=np.int64)}
        data.update({c: frame[c].to_numpy() for c in keep})
        data["risk"] = risk_of(ll)
        for j, label in enumerate(est.sensitive_labels_):
            data[f"log_lift[{label}]"] = ll[:, j]
        yield pd.DataFrame(data)


def write_scores(
    est: NeuralLift,
    source: Any,
    out: str | Path,
    *,
    keep: Sequence[str] = (),
    read_rows: int = 65_536,
) -> Path:
    """See :meth:`NeuralLift.score_source`."""
    return write_parquet_frames(score_batches(est, source, keep=keep, read_rows=read_rows), out)
