"""Mini-batches streamed from a source for one ensemble member, and the trainer that reads them.

Imported only when a neural estimator is fitted from a source (it imports torch).

An epoch visits the source's pieces (Parquet row groups) in a random order, keeps the records
of the member's training split, and passes them through a shuffle buffer of exactly
``shuffle_rows`` records: when full, the buffer is permuted (the member's ``torch.Generator``)
and cut into ``batch_size`` mini-batches; the few records that do not fill a last mini-batch
stay for the next buffer. At the end of the epoch what is left is permuted and emptied, the
last mini-batch possibly short. The buffer's contents depend only on the sequence of records,
not on how the reader happens to slice them, so the same records in the same pieces train
the same network bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._torch import torch
from ..exceptions import ValidationError
from ._neural_training import LiftTrainer
from ._stream_fit import ScannedSource
from ._stream_source import SourceReader, row_uniform

__all__ = ["RowSplit", "StreamLiftTrainer", "StreamedMembers", "TrainingStream"]

Encode = Callable[[Any], tuple[Any, Any]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]
#: ``mask(start, n)``: True for the rows ``start .. start + n`` to leave out
RowMask = Callable[[int, int], BoolArray]


def _writable(a: Any) -> Any:
    """``a`` as a writable C-contiguous array (a copy only when needed: torch refuses to share
    read-only memory, e.g. Arrow buffers)."""
    return np.require(a, requirements=["C", "W"])


class RowSplit:
    """Validation records: those whose :func:`row_uniform` (with ``seed``) is below
    ``threshold``; the others train. Rows that ``left_out`` marks (a held-out fold of a
    cross-fit) do neither."""

    def __init__(self, seed: int, threshold: float, left_out: RowMask | None = None) -> None:
        self.seed, self.threshold = int(seed), float(threshold)
        self.left_out = left_out

    def _split(self, start: int, n: int) -> tuple[BoolArray, BoolArray]:
        val = row_uniform(np.arange(start, start + n, dtype=np.int64), self.seed) < self.threshold
        used = np.ones(n, dtype=bool) if self.left_out is None else ~self.left_out(start, n)
        return val & used, ~val & used

    def validation(self, start: int, n: int) -> BoolArray:
        """Mask of the validation records among rows ``start .. start + n``."""
        return self._split(start, n)[0]

    def training(self, start: int, n: int) -> BoolArray:
        """Mask of the training records among rows ``start .. start + n``."""
        return self._split(start, n)[1]


def collect_validation(
    reader: SourceReader, split: RowSplit, encode: Encode, device: Any
) -> tuple[Any, Any]:
    """The member's validation records, encoded, as two tensors on ``device`` (one pass)."""
    xs, ss = [], []
    for start, frame in reader.scan():
        keep = split.validation(start, len(frame))
        if keep.any():
            x, s = encode(frame[keep])
            xs.append(x)
            ss.append(s)
    if not xs:
        return torch.zeros((0, 0), device=device), torch.zeros(0, dtype=torch.int64, device=device)
    return (
        torch.as_tensor(np.concatenate(xs), device=device),
        torch.as_tensor(np.concatenate(ss), device=device),
    )


class TrainingStream:
    """The training mini-batches of one member, re-read from ``reader`` at every epoch.

    ``encode(frame) -> (float32 features, int64 sensitive codes)`` as NumPy arrays;
    ``order_rng`` (NumPy) draws the order of the pieces; the buffer permutations come from the
    trainer's ``torch.Generator``.
    """

    def __init__(
        self,
        reader: SourceReader,
        encode: Encode,
        split: RowSplit,
        *,
        batch_size: int,
        shuffle_rows: int,
        order_rng: np.random.Generator,
        device: Any,
    ) -> None:
        self.reader, self.encode, self.split = reader, encode, split
        self.batch_size, self.device = int(batch_size), device
        self.shuffle_rows = max(int(shuffle_rows), int(batch_size))
        self.order_rng = order_rng

    def _emit(self, x: Any, s: Any, generator: Any, final: bool) -> Iterator[tuple[Any, Any]]:
        perm = torch.randperm(len(s), generator=generator, device=generator.device)
        n_full = len(s) if final else len(s) // self.batch_size * self.batch_size
        for lo in range(0, n_full, self.batch_size):
            idx = perm[lo : min(lo + self.batch_size, n_full)]
            yield x[idx], s[idx]
        rest = perm[n_full:]
        self._rest = (x[rest], s[rest])

    def epoch(self, generator: Any) -> Iterator[tuple[Any, Any]]:
        """The epoch's mini-batches ``(features, sensitive codes)`` as tensors on the device."""
        order = self.order_rng.permutation(len(self.reader.pieces)).tolist()
        pending_x: list[Any] = []
        pending_s: list[Any] = []
        held = 0
        for start, frame in self.reader.read(order):
            keep = self.split.training(start, len(frame))
            if not keep.any():
                continue
            x, s = self.encode(frame[keep])
            pending_x.append(torch.as_tensor(_writable(x), device=self.device))
            pending_s.append(torch.as_tensor(_writable(s), device=self.device))
            held += len(s)
            while held >= self.shuffle_rows:
                x_all, s_all = torch.cat(pending_x), torch.cat(pending_s)
                cut = self.shuffle_rows
                yield from self._emit(x_all[:cut], s_all[:cut], generator, final=False)
                pending_x = [self._rest[0], x_all[cut:]]
                pending_s = [self._rest[1], s_all[cut:]]
                held = sum(len(t) for t in pending_s)
        if held:
            yield from self._emit(torch.cat(pending_x), torch.cat(pending_s), generator, final=True)


class StreamLiftTrainer(LiftTrainer):
    """:class:`LiftTrainer` whose epoch reads its mini-batches from a :class:`TrainingStream`
    (passed as ``train``); the validation step is unchanged (the member's validation records,
    held in memory)."""

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.network.train()
        total, seen = 0.0, 0
        for features, sensitive in self.train.epoch(self.generator):
            record = self.step(features, sensitive)
            total += record["train_loss"] * len(sensitive)
            seen += len(sensitive)
        return {"train_loss": total / max(seen, 1)}


class StreamedMembers:
    """The data of each ensemble member of a streamed fit (a
    :data:`~privwatch.estimators._neural_training.MemberDraw`): called with the fit's
    generator, it draws the member's validation split (the rows whose :func:`row_uniform`
    falls below ``threshold``) and the order of its pieces, and returns its
    :class:`TrainingStream` and its validation records (tensors on ``device``)."""

    def __init__(
        self,
        scan: ScannedSource,
        threshold: float,
        batch_size: int,
        shuffle_rows: int,
        device: Any,
    ) -> None:
        self.scan, self.threshold, self.device = scan, threshold, device
        self.batch_size, self.shuffle_rows = batch_size, shuffle_rows

    def __call__(self, g: np.random.Generator) -> tuple[TrainingStream, tuple[Any, Any]]:
        scan = self.scan
        split = RowSplit(int(g.integers(0, 2**62)), self.threshold, scan.left_out)
        x_val, s_val = collect_validation(scan.reader, split, scan.encode, self.device)
        if len(s_val) == 0 or len(s_val) == scan.n_records:
            raise ValidationError(
                f"`source` must have records both to train on and to validate on; its "
                f"{scan.n_records} records gave {len(s_val)} validation records (raise "
                "`validation_fraction` or use more records)."
            )
        stream = TrainingStream(
            scan.reader,
            scan.encode,
            split,
            batch_size=self.batch_size,
            shuffle_rows=self.shuffle_rows,
            order_rng=np.random.default_rng(int(g.integers(0, 2**62))),
            device=self.device,
        )
        return stream, (x_val, s_val)
