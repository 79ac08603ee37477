"""The checks of a release request that the search options do not cover: the held-out folds and
tolerance, the columns and the records."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..._validation import check_positive_int, check_probability
from ...exceptions import ValidationError
from ._options import SearchOptions

__all__ = ["check_request"]


def check_request(
    frame: pd.DataFrame,
    sensitive: str | Sequence[str],
    observed: Sequence[str],
    options: SearchOptions,
    folds: int,
    held_out_tolerance: float,
) -> list[str]:
    """Check everything but the search options; returns the sensitive columns as a list."""
    if folds != 0:
        check_positive_int(folds, "folds")
        if folds < 2:
            raise ValidationError(f"`folds` must be 0 (no held-out check) or >= 2; got {folds}.")
    check_probability(held_out_tolerance, "held_out_tolerance")
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    useful = [] if options.useful is None else [options.useful]  # "" is a missing column too
    missing = [c for c in [*sens, *observed, *useful] if c not in frame.columns]
    if missing:
        raise ValidationError(f"columns {missing} are not in the data.")
    if len(frame) == 0:
        raise ValidationError("the data must have at least one record; got none.")
    return sens
