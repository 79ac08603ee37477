"""Exceptions and warnings raised by privwatch."""

from __future__ import annotations

__all__ = ["NotFittedError", "PrivacyWarning", "PrivwatchError", "ValidationError"]


class PrivwatchError(Exception):
    """Base class of every error privwatch raises on purpose."""


class ValidationError(PrivwatchError, ValueError):
    """An argument failed validation at a public boundary.

    Subclasses :class:`ValueError` so that generic ``except ValueError`` code keeps working.
    The message always names the argument and the offending value.
    """


class NotFittedError(PrivwatchError, AttributeError):
    """An estimator method that needs fitted state was called before ``fit``."""


class PrivacyWarning(UserWarning):
    """A user choice weakens a privacy guarantee or makes an estimate unreliable.

    Examples: estimating the lift on the very records being released, estimating it on cells
    with very few samples, or releasing records whose observed values were never seen at fit time.
    """
