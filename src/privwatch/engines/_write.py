"""Write streams of pandas frames to Parquet files, never holding more than one frame each."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..exceptions import ValidationError
from ._sources import require

__all__ = ["write_parquet_files", "write_parquet_frames"]


def _check_out(out: Any) -> Path:
    if not isinstance(out, str | os.PathLike) or not str(out).endswith(".parquet"):
        raise ValidationError(f"`out` must be a path ending in .parquet; got {out!r}.")
    path = Path(out)
    if not path.parent.is_dir():
        raise ValidationError(f"`out` must be in an existing folder; got {str(out)!r}.")
    return path


def write_parquet_files(
    parts: Iterable[Sequence[pd.DataFrame]], outs: Sequence[str | Path]
) -> list[Path]:
    """Write ``parts`` — each a tuple of frames, one per file of ``outs`` — one after another:
    file ``i`` receives the ``i``-th frame of every part (same columns and types each time).

    One pass over ``parts`` fills every file (a stream read once writes, say, a release and
    its scores side by side). Each file is written as ``out.partial`` and renamed only when
    every part is in, so a failure (or an interrupt) leaves no half-written ``out``; returns
    the paths. At least one part.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> parts = ((pd.DataFrame({"a": [i]}), pd.DataFrame({"b": [-i]})) for i in (0, 1))
    >>> a, b = write_parquet_files(parts, [os.path.join(d, f"{n}.parquet") for n in "ab"])
    >>> pd.read_parquet(a)["a"].tolist(), pd.read_parquet(b)["b"].tolist()
    ([0, 1], [0, -1])
    """
    pa, pq = require("pyarrow"), require("pyarrow.parquet")
    paths = [_check_out(o) for o in outs]
    tmps = [p.with_name(p.name + ".partial") for p in paths]
    writers: list[Any] = []
    try:
        for frames in parts:
            if len(frames) != len(paths):
                raise ValidationError(
                    f"each part must hold one frame per file ({len(paths)}); got {len(frames)}."
                )
            tables = [pa.Table.from_pandas(f, preserve_index=False) for f in frames]
            if not writers:
                writers = [pq.ParquetWriter(t, x.schema) for t, x in zip(tmps, tables, strict=True)]
            for w, x in zip(writers, tables, strict=True):
                w.write_table(x)
        if not writers:
            raise ValidationError("`frames` must hold at least one frame; got none.")
    except BaseException:
        for w in writers:
            w.close()
        for t in tmps:
            t.unlink(missing_ok=True)
        raise
    for w in writers:
        w.close()
    for t, p in zip(tmps, paths, strict=True):
        os.replace(t, p)
    return paths


def write_parquet_frames(frames: Iterable[pd.DataFrame], out: str | Path) -> Path:
    """Write ``frames`` (same columns and types) one after another to the Parquet file ``out``
    (:func:`write_parquet_files` with one file); returns ``out``. At least one frame.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> parts = (pd.DataFrame({"a": [i, i + 1]}) for i in (0, 2))
    >>> pd.read_parquet(write_parquet_frames(parts, out))["a"].tolist()
    [0, 1, 2, 3]
    """
    return write_parquet_files(((f,) for f in frames), [out])[0]
