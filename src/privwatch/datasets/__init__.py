"""Bundled data sets and generators."""

from ._compas import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from ._random import random_channel, random_joint

__all__ = ["COMPAS_BINS", "COMPAS_OBSERVED", "load_compas", "random_channel", "random_joint"]
