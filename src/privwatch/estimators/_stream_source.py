"""Records of a Parquet file, glob or pandas frame read piece by piece, never whole.

A source is cut into *pieces*: the row groups of its Parquet files (files in name order, as
:func:`privwatch.engines.iter_batches` reads them) or, for a pandas frame, consecutive slices
of ``read_rows`` rows. Each record keeps its 0-based *row position* in that order, which fixes
its validation split (:func:`row_uniform`) whatever order the pieces are read in. A sequential
scan visits the pieces in order, a training epoch in a random order; each piece is streamed in
slices of at most ``read_rows`` rows, so the memory held is one row group's column chunks and
one slice, never the table.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._validation import check_positive_int
from ..engines import parquet_files
from ..exceptions import ValidationError

__all__ = ["Piece", "SourceReader", "check_columns", "row_uniform"]

_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def row_uniform(rows: ArrayLike, seed: int) -> NDArray[np.float64]:
    r"""A uniform number in [0, 1) for each row position, fixed by ``seed`` (splitmix64).

    .. math:: z = r + \mathrm{seed}\cdot\varphi \bmod 2^{64},\ \text{then SplitMix64's mix},
              \quad u = \lfloor z / 2^{11} \rfloor / 2^{53}

    Examples
    --------
    >>> u = row_uniform([0, 1, 2], seed=7)
    >>> bool(((u >= 0) & (u < 1)).all()), bool((u == row_uniform([0, 1, 2], 7)).all())
    (True, True)
    """
    z = np.asarray(rows, dtype=np.int64).astype(np.uint64)
    z = z + np.uint64((int(seed) * _GOLDEN) % 2**64)  # array arithmetic wraps modulo 2**64
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return np.asarray((z >> np.uint64(11)).astype(np.float64) * 2.0**-53, dtype=np.float64)


@dataclass(frozen=True)
class Piece:
    """A row group of ``file`` (``group``), or rows ``start .. start + rows`` of a frame."""

    file: str | None
    group: int
    start: int
    rows: int


def _parquet() -> Any:
    try:
        return importlib.import_module("pyarrow.parquet")
    except ImportError as exc:  # pragma: no cover - pyarrow is a dependency of privwatch
        raise ImportError(
            "reading Parquet needs pyarrow, a dependency of privwatch that is missing here; "
            "install it with `pip install pyarrow`."
        ) from exc


def _kind_arrow(dtype: Any) -> str | None:
    pa: Any = importlib.import_module("pyarrow")
    if pa.types.is_dictionary(dtype):
        return "text"
    if pa.types.is_integer(dtype) or pa.types.is_floating(dtype):
        return "numeric"
    if pa.types.is_boolean(dtype) or pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return "text"
    return None


def _kind_pandas(dtype: Any) -> str | None:
    if pd.api.types.is_bool_dtype(dtype):
        return "text"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype):
        return "text"
    return "text" if pd.api.types.is_object_dtype(dtype) else None


def check_columns(sensitive: Any, observed: Any) -> tuple[str, list[str]]:
    """``sensitive`` one column name, ``observed`` a non-empty list of other distinct names."""
    if not isinstance(sensitive, str):
        raise ValidationError(
            f"`sensitive` must be one column name (a string); got {type(sensitive).__name__}."
        )
    if isinstance(observed, str) or not isinstance(observed, Sequence) or not observed:
        raise ValidationError(
            f"`observed` must be a non-empty list of column names; got {observed!r}."
        )
    obs = list(observed)
    if not all(isinstance(c, str) for c in obs) or len(set(obs)) != len(obs):
        raise ValidationError(f"`observed` must be distinct column names; got {obs!r}.")
    if sensitive in obs:
        raise ValidationError(
            f"`observed` must not contain the sensitive column {sensitive!r}; got {obs!r}."
        )
    return sensitive, obs


class SourceReader:
    """The pieces of ``source`` (a Parquet file or glob, or a pandas frame) restricted to
    ``columns``, checked to exist with numeric, boolean or text types."""

    def __init__(self, source: Any, columns: Sequence[str], read_rows: int) -> None:
        check_positive_int(read_rows, "read_rows")
        self.columns, self.read_rows = list(columns), int(read_rows)
        self.frame: pd.DataFrame | None = None
        self.pattern = ""
        if isinstance(source, pd.DataFrame):
            self.frame = source
            self.kinds = self._frame_kinds(source)
            n = len(source)
            self.pieces = [
                Piece(None, i, lo, min(self.read_rows, n - lo))
                for i, lo in enumerate(range(0, n, self.read_rows))
            ]
        elif isinstance(source, str | os.PathLike):
            self.pattern = str(source)
            self.pieces, self.kinds = self._file_pieces(self.pattern)
        else:
            raise ValidationError(
                "`source` must be a Parquet file or glob or a pandas DataFrame; got "
                f"{type(source).__name__}."
            )
        self.n_rows = sum(p.rows for p in self.pieces)
        if self.n_rows == 0:
            raise ValidationError("`source` must have at least one record; got 0.")

    def _absent(self, names: Sequence[str], where: str) -> None:
        absent = [c for c in self.columns if c not in names]
        if absent:
            raise ValidationError(
                f"`source` must have the columns {self.columns}; missing {absent} in {where} "
                f"(it has {list(names)})."
            )

    def _check_kinds(self, kinds: dict[str, str | None], types: dict[str, Any], where: str) -> None:
        bad = {c: str(types[c]) for c, k in kinds.items() if k is None}
        if bad:
            raise ValidationError(
                f"columns {list(bad)} of {where} must be numeric, boolean or text; got {bad}."
            )

    def _frame_kinds(self, frame: pd.DataFrame) -> dict[str, str]:
        self._absent([str(c) for c in frame.columns], "the frame")
        types = {c: frame[c].dtype for c in self.columns}
        kinds = {c: _kind_pandas(t) for c, t in types.items()}
        self._check_kinds(kinds, types, "the frame")
        return {c: str(k) for c, k in kinds.items()}

    def _file_pieces(self, pattern: str) -> tuple[list[Piece], dict[str, str]]:
        files = parquet_files(pattern)
        pq = _parquet()
        pieces: list[Piece] = []
        kinds: dict[str, str] = {}
        start = 0
        for f in files:
            try:
                meta = pq.ParquetFile(f)
            except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for non-Parquet
                raise ValidationError(
                    f"`source` must be Parquet files; {f!r} is not: {exc}"
                ) from None
            schema = meta.schema_arrow
            self._absent(schema.names, repr(f))
            types = {c: schema.field(c).type for c in self.columns}
            these = {c: _kind_arrow(t) for c, t in types.items()}
            self._check_kinds(these, types, repr(f))
            for c, k in these.items():
                if kinds.setdefault(c, str(k)) != k:
                    raise ValidationError(
                        f"column {c!r} must have one type in every file; it is {kinds[c]} in "
                        f"the first file and {k} ({types[c]}) in {f!r}."
                    )
            for g in range(meta.metadata.num_row_groups):
                rows = int(meta.metadata.row_group(g).num_rows)
                if rows:
                    pieces.append(Piece(f, g, start, rows))
                    start += rows
        return pieces, kinds

    # ------------------------------------------------------------------ reading
    def scan(self) -> Iterator[tuple[int, pd.DataFrame]]:
        """(row position of the first record, records) in source order: the order of
        :func:`privwatch.engines.iter_batches`, read one row group at a time (a whole-file
        ``ParquetFile.iter_batches`` pre-buffers the file's column chunks, so its memory grows
        with the file: 298 MiB of Arrow buffers for a 296 MiB file)."""
        yield from self.read(range(len(self.pieces)))

    def read(self, order: Sequence[int] | range) -> Iterator[tuple[int, pd.DataFrame]]:
        """The pieces in ``order`` (indices into :attr:`pieces`), each in slices of at most
        ``read_rows`` records."""
        if self.frame is not None:
            for i in order:
                p = self.pieces[i]
                yield p.start, self.frame.iloc[p.start : p.start + p.rows][self.columns]
            return
        pq = _parquet()
        handles: dict[str, Any] = {}
        for i in order:
            p = self.pieces[i]
            assert p.file is not None
            reader = handles.get(p.file)
            if reader is None:
                handles.clear()  # one open file at a time
                reader = handles[p.file] = pq.ParquetFile(p.file)
            start = p.start
            for batch in reader.iter_batches(
                batch_size=self.read_rows, row_groups=[p.group], columns=self.columns
            ):
                yield start, batch.to_pandas()
                start += batch.num_rows
