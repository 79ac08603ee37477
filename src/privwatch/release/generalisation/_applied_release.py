"""What applying a :class:`~privwatch.release.Generalisation` to new records returns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["AppliedRelease"]


@dataclass(frozen=True)
class AppliedRelease:
    """New records released through a :class:`~privwatch.release.Generalisation`.

    Attributes
    ----------
    released : DataFrame
        The released records, one column per observed column, in input order.
    unseen : ndarray of bool
        True for a record whose observed tuple was not seen at fit time (released as ``*``).
    input_rows : ndarray of int
        The position of each released record in the input (0-based).
    """

    released: pd.DataFrame
    unseen: np.ndarray
    input_rows: np.ndarray

    @property
    def n_unseen(self) -> int:
        """Records whose observed values were never seen at fit time (released as ``*``)."""
        return int(self.unseen.sum())
