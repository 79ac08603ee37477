"""A saved generalisation applied in an engine: DuckDB, Polars, pandas, Spark or a database.

The records stay in the engine, as on the audit's engine route. Three steps, none a Python
loop over records:

1. the distinct tuples of the observed columns, binned in the engine with the mechanism's cut
   points, and their counts (:func:`privwatch.engines.tuple_counts`: one group-by);
2. each distinct tuple looked up in the mechanism (:meth:`Generalisation.encode_binned`): its
   released tuple, or the suppressed cell ``*`` for a tuple never seen at fit time or with a
   missing value (the rule of :mod:`privwatch.release.generalisation._mechanism`);
3. every record joined with that small mapping in the engine and written by it
   (:func:`privwatch.engines.label_records`): ``release.parquet`` with ``record`` (the row
   position, as the audit's release file), the released observed columns and ``unseen``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import engines
from ...exceptions import ValidationError
from ._mechanism import Generalisation

__all__ = ["ENGINE_APPLY_FILES", "apply_in_engine", "engine_mapping"]

#: The files an application in an engine writes (the audit's record file, and the summary).
ENGINE_APPLY_FILES = ("release.parquet", "apply.json")


def engine_mapping(mech: Generalisation, tuples: pd.DataFrame) -> pd.DataFrame:
    """Each distinct tuple of ``tuples`` (binned columns as labels) with its released tuple
    (``release_<column>``) and ``unseen`` (True: released as ``*``)."""
    obs = list(mech.observed)
    codes = mech.encode_binned(tuples[obs])
    released = mech.decode(mech.release(codes))
    mapping = tuples[obs].reset_index(drop=True).copy()
    for c in obs:
        mapping[f"release_{c}"] = released[c].to_numpy(dtype=object)
    mapping["unseen"] = codes == mech.unseen_code
    return mapping


def apply_in_engine(
    mech: Generalisation,
    source: Any,
    release_file: str | Path,
    *,
    engine: str = "auto",
    table: str | None = None,
) -> dict[str, int]:
    """Release every record of ``source`` through ``mech`` in the engine, written to
    ``release_file`` (Parquet); returns ``{"n_records", "n_unseen"}``.

    ``source``: Parquet or CSV files (a path or glob), a database URL with ``table``, or a
    Polars, DuckDB or Spark frame. The mechanism's bins must be cut points (an audit saves
    them so).
    """
    obs = list(mech.observed)
    bins: Mapping[str, Any] = mech.bins
    quantile = [c for c, v in bins.items() if isinstance(v, (int, np.integer))]
    if quantile:
        raise ValidationError(
            f"the mechanism bins {quantile} into quantiles of the data, which an engine does "
            "not compute when applying it; save it from an audit (cut points) instead."
        )
    cuts = {c: [float(e) for e in v] for c, v in bins.items()}
    tuples = engines.tuple_counts(source, obs, bins=cuts or None, engine=engine, table=table)
    mapping = engine_mapping(mech, tuples)
    columns = {"record": engines.ROW_COLUMN, **{c: f"release_{c}" for c in obs}}
    columns["unseen"] = "unseen"
    engines.label_records(
        source, mapping, obs, out=release_file, engine=engine, table=table, columns=columns,
        bins=cuts or None,
    )  # fmt: skip
    counts = tuples["count"].to_numpy(dtype=np.int64)
    return {
        "n_records": int(counts.sum()),
        "n_unseen": int(counts[mapping["unseen"].to_numpy(dtype=bool)].sum()),
    }
