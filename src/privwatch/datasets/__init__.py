"""Bundled data sets and generators."""

from ._compas import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from ._digits import DigitImages, load_digit_images
from ._location import (
    LocationData,
    load_gowalla_paris,
    synthetic_users,
    to_metres,
    uniform_prior,
)
from ._ppan import SymmetricPair, gaussian_pair, symmetric_pair
from ._random import random_channel, random_joint

__all__ = [
    "COMPAS_BINS",
    "COMPAS_OBSERVED",
    "DigitImages",
    "LocationData",
    "SymmetricPair",
    "gaussian_pair",
    "load_compas",
    "load_digit_images",
    "load_gowalla_paris",
    "random_channel",
    "random_joint",
    "symmetric_pair",
    "synthetic_users",
    "to_metres",
    "uniform_prior",
]
