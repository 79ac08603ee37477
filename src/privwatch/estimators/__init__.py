"""Log-lift estimated from samples: plug-in counts, classifier posterior ratio, and the
Donsker-Varadhan / NWJ neural estimators, regularised scikit-learn posteriors, class-conditional
Gaussian mixtures, and ``AutoLift``
(the family chosen by held-out log-loss). All share ``fit(X, s)`` / ``log_lift(X)`` /
``score_samples(X)`` and save / load without pickle.

Every name is imported on first use (PEP 562): the learned families load scikit-learn and
PyTorch, about a second and more that a command fitting nothing (an audit on an engine's route)
should not pay at start-up."""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ._auto import AutoLift, make_lift_estimator, posterior_log_loss
    from ._base import LiftEstimator
    from ._bayes_grid import bayes_error_grid, grid_centres
    from ._candidates import CANDIDATES
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

#: Where each exported name lives (the module imported on its first use).
_WHERE = {
    "AutoLift": "._auto",
    "CANDIDATES": "._candidates",
    "Calibration": "._learned_breach",
    "ClassifierLift": "._classifier",
    "CrossFittedSource": "._stream_crossfit",
    "DVLift": "._dv",
    "LearnedBreach": "._learned_breach",
    "LiftEstimator": "._base",
    "LiftScores": "._crossfit",
    "MixtureLift": "._mixture",
    "MutualInformationEstimate": "._plugin_intervals",
    "PluginLift": "._plugin",
    "PosteriorLift": "._posterior",
    "TabularPreprocessor": "._preprocess",
    "bayes_error_grid": "._bayes_grid",
    "calibrate": "._learned_breach",
    "cross_fit_source": "._stream_crossfit",
    "fold_deviations": "._crossfit",
    "grid_centres": "._bayes_grid",
    "learned_breach": "._learned_breach",
    "lift_intervals": "._plugin_intervals",
    "make_lift_estimator": "._auto",
    "margin_flags": "._learned_breach",
    "miller_madow_mutual_information": "._plugin_intervals",
    "posterior_log_loss": "._auto",
    "recalibrate": "._learned_breach",
    "record_breach": "._learned_breach",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
