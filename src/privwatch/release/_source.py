"""The release of a table that lives in an engine: count there, search here, label there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import engines
from ._api import ReleaseResult, find_release

__all__ = ["release_source"]


def release_source(
    source: Any,
    sensitive: str | Sequence[str],
    observed: Sequence[str],
    *,
    epsilon: float,
    engine: str = "auto",
    table: str | None = None,
    out: str | Path | None = None,
    write_table: str | None = None,
    folds: int = 5,
    rng: int = 0,
    counts: pd.DataFrame | None = None,
    **options: Any,
) -> ReleaseResult:
    """Search the release of ``source`` with only its count table in Python.

    One group-by in the engine (:func:`privwatch.engines.count_table`, with the held-out folds
    computed from row positions), the search of :func:`find_release` on the small count table,
    and, when ``out`` (a ``.parquet``/``.csv`` path) or ``write_table`` (a new table in the
    source database) is given, one join in the engine that writes every record with its released
    values, risk and flags (:func:`privwatch.engines.label_records`, in input order).
    ``options`` are :func:`find_release`'s keyword arguments. The returned result's
    ``released`` and ``records`` hold one row per count-table row, not per record; its
    ``mapping`` holds one row per observed tuple. ``counts``: the source's count table when
    it was already computed (the same ``folds`` and ``rng``); the engine then only labels.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"s": list("ab") * 50, "x": list("pq") * 25 + list("qp") * 25})
    >>> release_source(df, "s", ["x"], epsilon=0.5, folds=0).satisfied
    True
    """
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    useful = options.get("useful")
    keys = list(observed) + ([useful] if useful and useful not in observed else [])
    if counts is None:
        counts = engines.count_table(
            source,
            sens,
            keys,
            engine=engine,
            folds=folds if folds >= 2 else None,
            seed=rng,
            table=table,
        )
    result = find_release(
        counts,
        sens,
        list(observed),
        epsilon=epsilon,
        folds=folds,
        rng=rng,
        counts_column="count",
        **options,
    )
    if out is not None or write_table is not None:
        engines.label_records(
            source,
            result.mapping,
            list(observed),
            out=out,
            engine=str(counts.attrs.get("engine", engine)),
            table=table,
            write_table=write_table,
        )
    return result
