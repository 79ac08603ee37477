"""Releases that keep each observed tuple or merge it into one cell: the privacy watchdog
(Hsu et al.) and its (epsilon, delta) relaxation (Sadeghi et al. Alg. 1), judged by the
held-out verdict of the search.

- ``_units.py``: :class:`TupleUnits`, the records counted per observed tuple (the watchdog's
  plug-in units) into a :class:`~privwatch.release.cells.CountTable` with held-out folds;
- ``_partition.py``: which tuples are flagged at epsilon (plug-in, or with a credible margin),
  and the greedy exemption of Sadeghi et al. Alg. 1 within a breach budget;
- ``_ladder.py``: :func:`merge_to_pass`, the partition walked up a ladder of margins until
  its held-out verdict is met (then, when no rung is, a rung's kept set narrowed to its
  safest tuples, :data:`KEPT_SHARES`), and :class:`MergedRelease`, what it found.

A partition of the tuples into kept tuples (one released cell each) and the merged cell
(``*`` in every column, which also receives every tuple never seen) is a deterministic map
observed tuple -> released cell, so the held-out check of the search applies to it unchanged
(:func:`~privwatch.release.heldout.estimate_breach` for given cells).
"""

from ._ladder import KEPT_SHARES, MergedRelease, Rung, merge_to_pass, rungs
from ._partition import cells_of, flag_tuples, relaxed_keep
from ._units import TupleUnits

__all__ = [
    "KEPT_SHARES",
    "MergedRelease",
    "Rung",
    "TupleUnits",
    "cells_of",
    "flag_tuples",
    "merge_to_pass",
    "relaxed_keep",
    "rungs",
]
