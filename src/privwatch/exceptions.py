"""Exceptions and warnings raised by privwatch."""

from __future__ import annotations

from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

__all__ = [
    "MemoryBudgetError",
    "NotFittedError",
    "PrivacyWarning",
    "PrivwatchError",
    "TamperedFileError",
    "ValidationError",
]


class PrivwatchError(Exception):
    """Base class of every error privwatch raises on purpose."""


class ValidationError(PrivwatchError, ValueError):
    """An argument failed validation at a public boundary.

    Subclasses :class:`ValueError` so that generic ``except ValueError`` code keeps working.
    The message always names the argument and the offending value.
    """


class MemoryBudgetError(ValidationError):
    """An allocation sized by user input or a loaded file would exceed the memory budget
    (``PRIVWATCH_MAX_MEMORY``); the message says how much it would take."""


class TamperedFileError(PrivwatchError, ValueError):
    """A saved model file is truncated, corrupted or tampered with: its schema (kind, version,
    shapes, dtypes, ranges) does not hold, or the SHA-256 of its tensors does not match."""


class NotFittedError(PrivwatchError, _SklearnNotFittedError):  # type: ignore[misc]
    """An estimator method that needs fitted state was called before ``fit``.

    Subclasses scikit-learn's ``NotFittedError`` (itself a ``ValueError`` and an
    ``AttributeError``), so scikit-learn's tools and ``except`` clauses recognise it.
    """


class PrivacyWarning(UserWarning):
    """A user choice weakens a privacy guarantee or makes an estimate unreliable.

    Examples: estimating the lift on the very records being released, estimating it on cells
    with very few samples, or releasing records whose observed values were never seen at fit time.
    """
