"""The names of the learned log-lift families :class:`~privwatch.estimators.AutoLift` can choose
from, in a module of their own so that naming them (the audit's option checks) does not import
the families themselves (scikit-learn, PyTorch)."""

from __future__ import annotations

__all__ = ["CANDIDATES"]

#: Families AutoLift can choose from (simplest first); the default set is all but ``"nwj"``.
CANDIDATES = ("quadratic_logistic", "gaussian_mixture", "gradient_boosting", "mlp", "dv", "nwj")
