"""Write a stream of pandas frames to one Parquet file, never holding more than one frame."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..exceptions import ValidationError
from ._sources import require

__all__ = ["write_parquet_frames"]


def write_parquet_frames(frames: Iterable[pd.DataFrame], out: str | Path) -> Path:
    """Write ``frames`` (same columns and types) one after another to the Parquet file ``out``.

    The file is written as ``out.partial`` and renamed when every frame is in, so a failure
    (or an interrupt) leaves no half-written ``out``; returns ``out``. At least one frame.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> parts = (pd.DataFrame({"a": [i, i + 1]}) for i in (0, 2))
    >>> pd.read_parquet(write_parquet_frames(parts, out))["a"].tolist()
    [0, 1, 2, 3]
    """
    pa, pq = require("pyarrow"), require("pyarrow.parquet")
    if not isinstance(out, str | os.PathLike) or not str(out).endswith(".parquet"):
        raise ValidationError(f"`out` must be a path ending in .parquet; got {out!r}.")
    path = Path(out)
    if not path.parent.is_dir():
        raise ValidationError(f"`out` must be in an existing folder; got {str(out)!r}.")
    tmp = path.with_name(path.name + ".partial")
    writer: Any = None
    try:
        for frame in frames:
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema)
            writer.write_table(table)
        if writer is None:
            raise ValidationError("`frames` must hold at least one frame; got none.")
    except BaseException:
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)
        raise
    writer.close()
    os.replace(tmp, path)
    return path
