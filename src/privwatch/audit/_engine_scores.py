r"""The engine route's per-value log-lift: the in-memory route's ``log_lift[<value>]`` scores.

Every record of an observed tuple :math:`x` gets, for each sensitive value :math:`s`, the
plug-in log-lift of the count table (Hsu et al.; Sadeghi et al., eq. 1)

.. math:: i(s, x) = \log \frac{p(s, x)}{p(s)\, p(x)},

:math:`-\infty` where no record of :math:`x` has :math:`s`. They are columns of the small
per-tuple mapping the engine joins the records with, so the scores file gets them with no
pass over the records in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..measures import log_lift

__all__ = ["lift_columns", "value_labels"]


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
