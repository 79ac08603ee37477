"""Classic and exactly optimal release mechanisms."""

from ._laplace import PlanarLaplace
from ._optimal_bayes import OptimalBayesResult, optimal_bayes_mechanism

__all__ = ["OptimalBayesResult", "PlanarLaplace", "optimal_bayes_mechanism"]
