"""The parameter checks of :class:`~privwatch.adversarial.Obfuscator` (run by ``fit``)."""

from __future__ import annotations

from typing import Any

from .._validation import check_open_fraction, check_positive, check_positive_int
from ..exceptions import ValidationError
from ._generators import GENERATORS

__all__ = ["ATTACKERS", "LOSSES", "check_obfuscator"]

LOSSES = ("mutual_information", "cross_entropy")
ATTACKERS = ("classifier", "bayes")


def check_obfuscator(self: Any) -> None:
    """Raise :class:`~privwatch.exceptions.ValidationError` naming the first parameter of the
    obfuscator ``self`` that is out of range."""
    if self.budget is not None:
        check_positive(self.budget, "budget")
    if self.loss not in LOSSES:
        raise ValidationError(f"`loss` must be one of {LOSSES}; got {self.loss!r}.")
    if self.generator not in GENERATORS:
        raise ValidationError(f"`generator` must be one of {GENERATORS}; got {self.generator!r}.")
    if self.attacker not in ATTACKERS:
        raise ValidationError(f"`attacker` must be one of {ATTACKERS}; got {self.attacker!r}.")
    if self.attacker == "bayes" and (
        self.generator != "anchors" or self.loss != "mutual_information"
    ):
        raise ValidationError(
            '`attacker="bayes"` needs a release with finite support and the MI loss: '
            f'generator="anchors", loss="mutual_information"; got generator='
            f"{self.generator!r}, loss={self.loss!r}."
        )
    check_positive(self.beta, "beta")
    if not (isinstance(self.alpha, (int, float)) and self.alpha >= 0):
        raise ValidationError(f"`alpha` must be a non-negative number; got {self.alpha!r}.")
    if self.init_epsilon is not None:
        check_positive(self.init_epsilon, "init_epsilon")
    if not (0 <= self.margin < 1):
        raise ValidationError(f"`margin` must be in [0, 1); got {self.margin!r}.")
    if not (isinstance(self.noise_dim, int) and self.noise_dim >= 3):
        raise ValidationError(
            f"`noise_dim` must be an int >= 3 (three seeds drive the planar Laplace of G0); "
            f"got {self.noise_dim!r}."
        )
    for name in (
        "anchor_grid",
        "max_iter",
        "patience",
        "hits",
        "classifier_epochs",
        "classifier_batch_size",
        "generator_epochs",
        "generator_batch_size",
    ):
        check_positive_int(getattr(self, name), name)
    check_open_fraction(self.validation_fraction, "validation_fraction")
