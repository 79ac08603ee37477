"""Exceptions and warnings raised by privwatch."""

from __future__ import annotations

from typing import TYPE_CHECKING

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


if TYPE_CHECKING:
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

    class NotFittedError(PrivwatchError, _SklearnNotFittedError):  # type: ignore[misc]
        """An estimator method that needs fitted state was called before ``fit``."""

else:

    def __getattr__(name: str) -> type[Exception]:
        """``NotFittedError``, made on first use: it subclasses scikit-learn's, and importing
        scikit-learn (with ``scipy.stats``) costs about 0.5 s of CPU that a command which fits
        nothing (an audit on an engine's route) should not pay at start-up."""
        if name != "NotFittedError":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return globals().setdefault(name, _not_fitted_error())


def _not_fitted_error() -> type[Exception]:
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

    class NotFittedError(PrivwatchError, _SklearnNotFittedError):  # type: ignore[misc]
        """An estimator method that needs fitted state was called before ``fit``.

        Subclasses scikit-learn's ``NotFittedError`` (itself a ``ValueError`` and an
        ``AttributeError``), so scikit-learn's tools and ``except`` clauses recognise it.
        """

    NotFittedError.__qualname__ = "NotFittedError"
    return NotFittedError


class PrivacyWarning(UserWarning):
    """A user choice weakens a privacy guarantee or makes an estimate unreliable.

    Examples: estimating the lift on the very records being released, estimating it on cells
    with very few samples, or releasing records whose observed values were never seen at fit time.
    """
