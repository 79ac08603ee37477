"""privwatch: information-theoretic privacy of data releases.

Measure leakage of a sensitive attribute (:mod:`privwatch.measures`), hold a joint pmf with its
labels (:class:`Joint`), and preprocess tables (:func:`bin_columns`).
"""

from . import measures, watchdog
from .exceptions import (
    MemoryBudgetError,
    NotFittedError,
    PrivacyWarning,
    PrivwatchError,
    TamperedFileError,
    ValidationError,
)
from .joint import Joint
from .preprocessing import bin_columns
from .watchdog import Watchdog

__version__ = "0.1.0"

__all__ = [
    "Joint",
    "MemoryBudgetError",
    "NotFittedError",
    "PrivacyWarning",
    "PrivwatchError",
    "TamperedFileError",
    "ValidationError",
    "Watchdog",
    "__version__",
    "bin_columns",
    "measures",
    "watchdog",
]
