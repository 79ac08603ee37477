"""The fitted generalisation as a mechanism: saved once, applied to new records.

- ``_mechanism.py``: :class:`Generalisation` (a :class:`~privwatch.mechanisms.FiniteMechanism`):
  every observed tuple seen at fit time with its released tuple, the binning of numeric columns
  and the guarantee the audit verified; :meth:`Generalisation.save` / :meth:`~Generalisation.load`;
- ``_file_format.py``: its saved form (the checked privwatch model format, no arrays), checked
  field by field;
- ``_applied_release.py``: :class:`AppliedRelease`, what applying it to new records returns;
- ``_apply_batch.py``: :func:`apply_saved_mechanism`, a saved mechanism applied to a file of
  new records, written into a folder (``release.csv``, ``apply.json``; what ``privwatch apply``
  runs); ``_apply_engine.py``: :func:`apply_in_engine`, the same in an engine (DuckDB, Polars,
  Spark, a database: the records joined and written there, ``release.parquet``).
"""

from ._applied_release import AppliedRelease
from ._apply_batch import APPLY_FILES, AppliedBatch, apply_saved_mechanism
from ._file_format import MECHANISM_FORMAT
from ._mechanism import Generalisation, apply_mechanism, load_mechanism

__all__ = [
    "APPLY_FILES",
    "MECHANISM_FORMAT",
    "AppliedBatch",
    "AppliedRelease",
    "Generalisation",
    "apply_mechanism",
    "apply_saved_mechanism",
    "load_mechanism",
]
