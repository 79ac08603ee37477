"""Classic and exactly optimal release mechanisms."""

from ._laplace import PlanarLaplace
from ._optimal_bayes import OptimalBayesResult, optimal_bayes_mechanism
from ._optimal_privacy import OptimalPrivacyResult, optimal_privacy_mechanism

__all__ = [
    "OptimalBayesResult",
    "OptimalPrivacyResult",
    "PlanarLaplace",
    "optimal_bayes_mechanism",
    "optimal_privacy_mechanism",
]
