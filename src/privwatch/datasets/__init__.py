"""Bundled data sets and generators."""

from ._compas import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from ._location import LocationData, load_gowalla_paris, synthetic_users, to_metres
from ._random import random_channel, random_joint

__all__ = [
    "COMPAS_BINS",
    "COMPAS_OBSERVED",
    "LocationData",
    "load_compas",
    "load_gowalla_paris",
    "random_channel",
    "random_joint",
    "synthetic_users",
    "to_metres",
]
