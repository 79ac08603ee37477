"""The fitted-state check shared by every privwatch estimator.

Every class that fits subclasses :class:`sklearn.base.BaseEstimator` directly (``__init__`` only
stores its arguments; ``get_params`` / ``set_params`` / ``clone`` come from scikit-learn).
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_is_fitted"]


def check_is_fitted(estimator: Any, attribute: str) -> None:
    """Raise :class:`~privwatch.exceptions.NotFittedError` (a subclass of scikit-learn's) unless
    ``estimator`` has the fitted ``attribute``."""
    if not hasattr(estimator, attribute):
        from .exceptions import NotFittedError  # made on first use (it loads scikit-learn)

        raise NotFittedError(
            f"This {type(estimator).__name__} is not fitted yet; call fit(...) first."
        )
