"""Mechanisms learned adversarially: the MI-trained location obfuscator (Romanelli et al.) and
Privacy-Preserving Adversarial Networks (Tripathy, Wang, Ishwar)."""

from ._curve import fit_many
from ._families import (
    CategoricalAdversary,
    FactoredMechanism,
    GaussianAdversary,
    GaussianMechanism,
    GaussianMixtureMechanism,
    MatrixMechanism,
    SeedNoiseMechanism,
    hamming,
    pixel_cross_entropy,
    squared_error,
)
from ._gaussian import gaussian_mi
from ._mi import batch_mutual_information
from ._mi_utility import UsefulPosterior
from ._obfuscator import Obfuscator
from ._ppan import PPAN
from ._runtime import GraphFallbackWarning

__all__ = [
    "PPAN",
    "CategoricalAdversary",
    "FactoredMechanism",
    "GaussianAdversary",
    "GaussianMechanism",
    "GaussianMixtureMechanism",
    "GraphFallbackWarning",
    "MatrixMechanism",
    "Obfuscator",
    "SeedNoiseMechanism",
    "UsefulPosterior",
    "batch_mutual_information",
    "fit_many",
    "gaussian_mi",
    "hamming",
    "pixel_cross_entropy",
    "squared_error",
]
