"""Mechanisms learned adversarially: the MI-trained location obfuscator (Romanelli et al.)."""

from ._mi import batch_mutual_information
from ._obfuscator import IterationRecord, Obfuscator

__all__ = ["IterationRecord", "Obfuscator", "batch_mutual_information"]
