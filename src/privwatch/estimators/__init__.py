"""Log-lift estimated from samples: plug-in counts, classifier posterior ratio, and the
Donsker-Varadhan / NWJ neural estimators, regularised scikit-learn posteriors, class-conditional
Gaussian mixtures, and ``AutoLift``
(the family chosen by held-out log-loss). All share ``fit(X, s)`` / ``log_lift(X)`` /
``score_samples(X)`` and save / load without pickle."""

from ._auto import CANDIDATES, AutoLift, make_lift_estimator, posterior_log_loss
from ._base import LiftEstimator
from ._bayes_grid import bayes_error_grid, grid_centres
from ._classifier import ClassifierLift
from ._crossfit import LiftScores, fold_deviations
from ._dv import DVLift
from ._learned_breach import (
    Calibration,
    LearnedBreach,
    calibrate,
    learned_breach,
    margin_flags,
    recalibrate,
    record_breach,
)
from ._mixture import MixtureLift
from ._plugin import PluginLift
from ._plugin_intervals import (
    MutualInformationEstimate,
    lift_intervals,
    miller_madow_mutual_information,
)
from ._posterior import PosteriorLift
from ._preprocess import TabularPreprocessor
from ._stream_crossfit import CrossFittedSource, cross_fit_source

__all__ = [
    "CANDIDATES",
    "AutoLift",
    "Calibration",
    "ClassifierLift",
    "CrossFittedSource",
    "DVLift",
    "LearnedBreach",
    "LiftEstimator",
    "LiftScores",
    "MixtureLift",
    "MutualInformationEstimate",
    "PluginLift",
    "PosteriorLift",
    "TabularPreprocessor",
    "bayes_error_grid",
    "calibrate",
    "cross_fit_source",
    "fold_deviations",
    "grid_centres",
    "learned_breach",
    "lift_intervals",
    "make_lift_estimator",
    "margin_flags",
    "miller_madow_mutual_information",
    "posterior_log_loss",
    "recalibrate",
    "record_breach",
]
