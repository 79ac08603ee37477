"""The cells of a release: the count table they are summed from, the lift test they must pass,
and what that test promises about each sensitive value.

- :class:`CountTable` (``_counts.py``): one count per (observed tuple, sensitive value, fold),
  everything a search or a check needs from the records; :func:`group_rows`,
  :func:`cell_counts`, :func:`first_rows` and the entropy of cell sizes work on its rows;
- :class:`LiftBox` (``_lift_box.py``): the lift-privacy test of cell counts (two-sided or
  one-sided, :data:`DISCLOSURES`), with an optional credible margin;
- ``_protection.py``: per sensitive value, what a guarantee at epsilon promises
  (:func:`per_value`, :func:`table_protection`) and the words that explain it.
"""

from ._counts import (
    CountTable,
    cell_counts,
    entropy_of_sizes,
    entropy_terms,
    first_rows,
    group_rows,
    row_sums,
)
from ._lift_box import DISCLOSURES, LiftBox
from ._protection import explain_protection, per_value, table_protection, unprotected

__all__ = [
    "DISCLOSURES",
    "CountTable",
    "LiftBox",
    "cell_counts",
    "entropy_of_sizes",
    "entropy_terms",
    "explain_protection",
    "first_rows",
    "group_rows",
    "per_value",
    "row_sums",
    "table_protection",
    "unprotected",
]
