"""privwatch: information-theoretic privacy of data releases.

Measure leakage of a sensitive attribute (:mod:`privwatch.measures`), hold a joint pmf with its
labels (:class:`Joint`), and preprocess tables (:func:`bin_columns`); audit a table with
:func:`privwatch.audit.run` and an :class:`AuditSpec` (imported on first use: the audit loads
the estimators, and with them PyTorch).
"""

from typing import TYPE_CHECKING, Any

from . import measures
from .exceptions import (
    MemoryBudgetError,
    PrivacyWarning,
    PrivwatchError,
    TamperedFileError,
    ValidationError,
)
from .joint import Joint
from .preprocessing import bin_columns

if TYPE_CHECKING:
    from . import watchdog
    from .exceptions import NotFittedError
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
    """``privwatch.audit``, ``privwatch.check``, ``privwatch.AuditSpec``, ``privwatch.watchdog``,
    ``privwatch.Watchdog`` and ``privwatch.NotFittedError``, imported on first use (the audit
    loads the estimators; the watchdog and ``NotFittedError`` load scikit-learn and with it
    ``scipy.stats``, about 0.5 s of CPU that a command fitting nothing should not pay)."""
    import importlib

    if name in ("audit", "check", "AuditSpec"):
        module = importlib.import_module(".check" if name == "check" else ".audit", __name__)
        return module if name in ("audit", "check") else module.AuditSpec
    if name in ("watchdog", "Watchdog"):
        module = importlib.import_module(".watchdog", __name__)
        return module if name == "watchdog" else module.Watchdog
    if name == "NotFittedError":
        return importlib.import_module(".exceptions", __name__).NotFittedError
    raise AttributeError(f"module 'privwatch' has no attribute {name!r}")
