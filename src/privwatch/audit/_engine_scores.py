r"""The engine route's scores as the in-memory route writes them: ``log_lift[<value>]`` and
``dropped_missing``.

Every record of an observed tuple :math:`x` gets, for each sensitive value :math:`s`, the
plug-in log-lift of the count table (Hsu et al.; Sadeghi et al., eq. 1)

.. math:: i(s, x) = \log \frac{p(s, x)}{p(s)\, p(x)},

:math:`-\infty` where no record of :math:`x` has :math:`s`. They are columns of the small
per-tuple mapping the engine joins the records with, so the scores file gets them with no
pass over the records in Python.

With ``missing`` drop, both files get ``dropped_missing`` (true for a record the policy left
out: a missing value in a sensitive, observed or useful column; its other values empty), as
the in-memory route's do (``report/_write.py``): the mapping is then keyed by the observed
columns and every other key column with a missing value, so that the engine's join marks
them (:func:`with_dropped`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..measures import log_lift

__all__ = ["DROPPED", "lift_columns", "value_labels", "with_dropped"]

#: The column of both record files marking a record the missing-value policy dropped (the
#: in-memory files' ``report.DROPPED_COLUMN``).
DROPPED = "dropped_missing"


def value_labels(counts: pd.DataFrame, sensitive: Sequence[str], s_code: np.ndarray) -> list[str]:
    """The text of each sensitive code (``a|b`` for several sensitive columns, as the
    in-memory route writes the joint value)."""
    first = pd.Series(np.arange(len(s_code))).groupby(s_code).first().to_numpy()
    rows = counts.iloc[first]
    cols = [rows[c].astype(str).to_numpy() for c in sensitive]
    return ["|".join(str(col[i]) for col in cols) for i in range(len(first))]


def lift_columns(
    joint: np.ndarray, labels: Sequence[str], tuple_code: np.ndarray
) -> dict[str, Any]:
    """``log_lift[<value>]`` of each row of a mapping (its observed tuple's code in ``joint``'s
    columns), the values in sorted order of their text (as the in-memory scores)."""
    p = np.asarray(joint, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = np.where(p > 0, log_lift(p), -np.inf)
    order = sorted(range(len(labels)), key=lambda k: labels[k])
    return {f"log_lift[{labels[k]}]": ll[k, tuple_code] for k in order}


def with_dropped(
    mapping: pd.DataFrame, counts: pd.DataFrame, dropped: pd.DataFrame, observed: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """``(mapping, on)``: the mapping keyed by ``on`` (the observed columns, then the other key
    columns with a missing value in ``dropped``), one row per distinct ``on`` tuple of the
    records (``counts``, complete, and ``dropped``), with ``release_dropped_missing``; a
    dropped tuple's other values are missing."""
    obs = list(observed)
    extra = [k for k in dropped.columns if k not in obs and dropped[k].isna().any()]
    on = [*obs, *extra]
    tuples = pd.concat([counts[on], dropped[on]], ignore_index=True).drop_duplicates()
    gap = tuples.isna().any(axis=1).to_numpy()
    kept = tuples[~gap].merge(mapping, on=obs, how="left", validate="many_to_one")
    blank = tuples[gap].reset_index(drop=True)
    for col in mapping.columns:
        if col not in obs:
            blank[col] = pd.Series([None] * len(blank), dtype=object)
    out = pd.concat([kept, blank], ignore_index=True)
    out[f"release_{DROPPED}"] = np.r_[np.zeros(len(kept), bool), np.ones(len(blank), bool)]
    return out, on
