"""Log-lift estimated from samples: plug-in counts, classifier posterior ratio, and the
Donsker-Varadhan / NWJ neural estimators. All share ``fit(X, s)`` / ``log_lift(X)`` /
``score_samples(X)`` and save / load without pickle."""

from ._base import LiftEstimator
from ._bayes_grid import bayes_error_grid, grid_centres
from ._classifier import ClassifierLift
from ._dv import DVLift
from ._plugin import PluginLift
from ._preprocess import TabularPreprocessor

__all__ = [
    "ClassifierLift",
    "DVLift",
    "LiftEstimator",
    "PluginLift",
    "TabularPreprocessor",
    "bayes_error_grid",
    "grid_centres",
]
