"""privwatch: information-theoretic privacy of data releases.

Measure leakage of a sensitive attribute (:mod:`privwatch.measures`), hold a joint pmf with its
labels (:class:`Joint`), and preprocess tables (:func:`bin_columns`); audit a table with
:func:`privwatch.audit.run` and an :class:`AuditSpec` (imported on first use: the audit loads
the estimators, and with them PyTorch).
"""

from typing import Any

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
    "AuditSpec",
    "Joint",
    "MemoryBudgetError",
    "NotFittedError",
    "PrivacyWarning",
    "PrivwatchError",
    "TamperedFileError",
    "ValidationError",
    "Watchdog",
    "__version__",
    "audit",
    "bin_columns",
    "check",
    "measures",
    "watchdog",
]


def __getattr__(name: str) -> Any:
    """``privwatch.audit``, ``privwatch.check`` and ``privwatch.AuditSpec``, imported on first
    use."""
    if name in ("audit", "check", "AuditSpec"):
        import importlib

        module = importlib.import_module(".check" if name == "check" else ".audit", __name__)
        return module if name in ("audit", "check") else module.AuditSpec
    raise AttributeError(f"module 'privwatch' has no attribute {name!r}")
