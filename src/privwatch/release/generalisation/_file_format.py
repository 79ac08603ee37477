"""The saved form of a :class:`~privwatch.release.Generalisation`: its fields, checked.

A generalisation is saved in the checked privwatch model format (:mod:`privwatch._serialization`,
kind ``"Generalisation"``, no arrays) with this state, unchanged since the first saved
mechanisms (format ``privwatch-generalisation``, version 1)::

    {"format": "privwatch-generalisation", "version": 1, "privwatch_version": "0.1.0",
     "sensitive": "s", "observed": ["a", "age"], "bins": {"age": [39.0, 60.3]},
     "epsilon": 0.4, "disclosure": "both", "method": "local", "status": "met",
     "unseen_rule": UNSEEN_RULE, "input": {"sha256": null, "name": null},
     "tuples": [["high", "<39"], ...], "released": [["*", "<39"], ...]}

The checks here are the ones the constructor runs on Python arguments (raising
:class:`~privwatch.exceptions.ValidationError` that names the parameter); on a file they run
inside :func:`privwatch._serialization.reconstructing`, which turns them into
:class:`~privwatch.exceptions.TamperedFileError`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..._validation import short_repr
from ...exceptions import ValidationError

__all__ = [
    "MECHANISM_FORMAT",
    "MECHANISM_KIND",
    "MECHANISM_VERSION",
    "STATE_KEYS",
    "STATUSES",
    "UNSEEN_RULE",
    "check_bins",
    "check_input",
    "check_observed",
    "check_rows",
    "check_state_envelope",
]

#: The ``format`` of a saved generalisation's state (inside the checked model format).
MECHANISM_FORMAT = "privwatch-generalisation"
#: The version of that state.
MECHANISM_VERSION = 1
#: The ``kind`` of a saved generalisation in the checked model format.
MECHANISM_KIND = "Generalisation"
#: What a saved generalisation does with a tuple never seen at fit time (the one rule there is).
UNSEEN_RULE = (
    "suppress: a tuple of observed values never seen at fit time is released as '*' in every "
    "observed column"
)
#: Whether the fitted release met its guarantee (``leakage.json`` ``status``).
STATUSES = ("met", "not_met")
STATE_KEYS = frozenset(
    {
        "format", "version", "privwatch_version", "sensitive", "observed", "bins", "epsilon",
        "disclosure", "method", "status", "unseen_rule", "input", "tuples", "released",
    }
)  # fmt: skip
_MAX_QUANTILE_BINS = 10**6


def check_observed(observed: Any) -> tuple[str, ...]:
    """``observed`` as a tuple of distinct column names (at least one)."""
    if (
        isinstance(observed, (str, bytes))
        or not isinstance(observed, Sequence)
        or not observed
        or not all(isinstance(c, str) for c in observed)
        or len(set(observed)) != len(observed)
    ):
        raise ValidationError(
            f"`observed` must be a non-empty list of distinct column names; got "
            f"{short_repr(observed)}."
        )
    return tuple(observed)


def _is_scalar(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, (str, int)) or (isinstance(v, float) and math.isfinite(v))


def check_rows(rows: Any, width: int, name: str) -> list[list[Any]]:
    """``rows`` as a non-empty list of rows of ``width`` scalars (text, int or finite float)."""
    if (
        isinstance(rows, (str, bytes))
        or not isinstance(rows, Sequence)
        or not rows
        or not all(
            not isinstance(r, (str, bytes))
            and isinstance(r, Sequence)
            and len(r) == width
            and all(_is_scalar(v) for v in r)
            for r in rows
        )
    ):
        raise ValidationError(
            f"`{name}` must be a non-empty list of rows of {width} values (text or finite "
            f"numbers), one value per observed column; got {short_repr(rows)}."
        )
    return [list(r) for r in rows]


def _is_bin_spec(spec: Any) -> bool:
    if isinstance(spec, bool):
        return False
    if isinstance(spec, int):
        return 2 <= spec <= _MAX_QUANTILE_BINS
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence) or not spec:
        return False
    if not all(
        isinstance(e, (int, float)) and not isinstance(e, bool) and math.isfinite(e) for e in spec
    ):
        return False
    return all(a < b for a, b in itertools.pairwise(spec))


def check_bins(bins: Any, observed: Sequence[str]) -> dict[str, Any]:
    """``bins`` (``None`` for none) as a dict from observed columns to cut points (an increasing
    list of finite numbers) or, as :func:`privwatch.preprocessing.bin_columns` also takes, a
    number of quantile bins (2 to 10**6)."""
    if bins is None:
        return {}
    if not isinstance(bins, Mapping) or not set(bins) <= set(observed):
        raise ValidationError(
            f"`bins` must map observed columns to their cut points; got {short_repr(bins)}."
        )
    for col, spec in bins.items():
        if not _is_bin_spec(spec):
            raise ValidationError(
                f"`bins[{col!r}]` must be increasing finite cut points or a number of bins "
                f"from 2 to {_MAX_QUANTILE_BINS}; got {short_repr(spec)}."
            )
    return {col: spec if isinstance(spec, int) else list(spec) for col, spec in bins.items()}


def check_input(name: Any, sha256: Any) -> tuple[str | None, str | None]:
    """The fitted input's file name and SHA-256 (each text or None)."""
    for value, label in ((name, "input_name"), (sha256, "input_sha256")):
        if value is not None and not isinstance(value, str):
            raise ValidationError(f"`{label}` must be text or None; got {short_repr(value)}.")
    return name, sha256


def check_state_envelope(state: Mapping[str, Any]) -> None:
    """The parts of a saved state that the constructor does not take: keys, format, version,
    the unseen rule and the shape of ``input``."""
    if set(state) != STATE_KEYS:
        raise KeyError(f"the state has keys {sorted(state)[:20]}, not {sorted(STATE_KEYS)}")
    if state["format"] != MECHANISM_FORMAT or state["version"] != MECHANISM_VERSION:
        raise ValueError(f"format {state['format']!r} version {state['version']!r}")
    if state["unseen_rule"] != UNSEEN_RULE:
        raise ValueError(f"unseen_rule {str(state['unseen_rule'])[:60]!r}")
    if not isinstance(state["input"], dict) or set(state["input"]) != {"sha256", "name"}:
        raise ValueError("input must be a {sha256, name} record")
    if not isinstance(state["privwatch_version"], str):
        raise ValueError(f"privwatch_version {state['privwatch_version']!r}")
