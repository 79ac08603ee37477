"""A release made elsewhere, aligned record by record with the original it was made from.

Row alignment is by position (the release lists the original's records in the same order) or,
with ``key``, by a column: either a column of both tables (a record identifier, unique in each)
or a column of the release alone holding each record's 0-based row number in the original (as
ANJANA's ``index`` column and privwatch's own ``record`` column do). Records of the original
that the release does not list are **suppressed** (released as ``*`` in every column), as are
records released as ``*`` (or empty) in every observed column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import short_repr
from ..exceptions import ValidationError
from ..release import SUPPRESSED, as_text
from ._labels import PERTURBED, STATES, SUPPRESSED_VALUE, classify

__all__ = ["Aligned", "align"]


@dataclass(frozen=True)
class Aligned:
    """The original and its release, one row per original record.

    ``original``: the original's sensitive and observed columns; ``released``: each record's
    released observed values as text (``*`` where suppressed or absent); ``listed``: whether
    the release lists the record; ``states``: per record and observed column, the code of
    :data:`~privwatch.check._labels.STATES`; ``suppressed``: records released as ``*``
    in every observed column or not listed; ``perturbed``: records (not suppressed) with a
    perturbed value in some column.
    """

    original: pd.DataFrame
    released: pd.DataFrame
    sensitive: list[str]
    observed: list[str]
    listed: np.ndarray
    states: np.ndarray
    key: str | None
    release_rows: int

    @property
    def suppressed(self) -> np.ndarray:
        return np.asarray(~self.listed | (self.states == SUPPRESSED_VALUE).all(1))

    @property
    def perturbed(self) -> np.ndarray:
        return np.asarray(~self.suppressed & (self.states == PERTURBED).any(1))

    def state_counts(self) -> dict[str, dict[str, int]]:
        """Per observed column, records in each state (listed records only for the states
        other than suppressed; a record not listed counts as suppressed)."""
        out = {}
        for j, c in enumerate(self.observed):
            col = np.where(self.listed, self.states[:, j], SUPPRESSED_VALUE)
            out[c] = {name: int((col == i).sum()) for i, name in enumerate(STATES)}
        return out


def _columns(
    original: pd.DataFrame,
    release: pd.DataFrame,
    sensitive: Sequence[str],
    observed: Sequence[str] | None,
    key: str | None,
) -> list[str]:
    for s in sensitive:
        if s not in original.columns:
            raise ValidationError(
                f"`sensitive` must name columns of the original; got {s!r} (columns: "
                f"{short_repr(list(original.columns))})."
            )
    if observed is None:
        skip = {*sensitive, key}
        observed = [c for c in release.columns if c in original.columns and c not in skip]
        if not observed:
            raise ValidationError(
                "`observed` must name released columns: the release shares no column with the "
                f"original besides the sensitive and key ones (release columns: "
                f"{short_repr(list(release.columns))})."
            )
    for c in observed:
        for name, frame in (("original", original), ("release", release)):
            if c not in frame.columns:
                raise ValidationError(
                    f"`observed` must name columns of both tables; got {c!r}, which the {name} "
                    f"lacks (its columns: {short_repr(list(frame.columns))})."
                )
        if c in sensitive:
            raise ValidationError(f"`observed` must not repeat a sensitive column; got {c!r}.")
    return list(observed)


def _unique(values: pd.Series, name: str) -> None:
    dup = values[values.duplicated()]
    if len(dup):
        raise ValidationError(
            f"`key` must be unique in the {name}; got {len(dup)} repeated value(s), e.g. "
            f"{short_repr(dup.iloc[0])}."
        )
    if values.isna().any():
        raise ValidationError(f"`key` must have no missing value in the {name}.")


def _positions(original: pd.DataFrame, release: pd.DataFrame, key: str | None) -> np.ndarray:
    """The original row of every release row."""
    n, m = len(original), len(release)
    if key is None:
        if m != n:
            raise ValidationError(
                f"the release has {m:,} rows and the original {n:,}: a release with records "
                "left out needs `key` to align them (a column of both tables, or a column of "
                "the release holding each record's row number in the original)."
            )
        return np.arange(n)
    if key not in release.columns:
        raise ValidationError(
            f"`key` must name a column of the release; got {key!r} (columns: "
            f"{short_repr(list(release.columns))})."
        )
    _unique(release[key], "release")
    if key in original.columns:
        _unique(original[key], "original")
        index = pd.Index(as_text(original[key]))
        pos = index.get_indexer(pd.Index(as_text(release[key])))
        what = "values of the original's key"
    else:
        numbers = pd.to_numeric(release[key], errors="coerce")
        ok = numbers.notna() & (numbers % 1 == 0)
        pos = np.where(ok, numbers.fillna(-1), -1).astype(np.int64)
        pos[(pos < 0) | (pos >= n)] = -1
        what = f"row numbers 0..{n - 1} of the original"
    if (pos < 0).any():
        bad = release[key].to_numpy()[np.flatnonzero(pos < 0)[0]]
        raise ValidationError(
            f"`key` must hold {what}; got {short_repr(bad)} in the release "
            f"({int((pos < 0).sum()):,} such rows)."
        )
    return np.asarray(pos, dtype=np.int64)


def align(
    original: pd.DataFrame,
    release: pd.DataFrame,
    sensitive: Sequence[str],
    observed: Sequence[str] | None,
    key: str | None = None,
) -> Aligned:
    """Align ``release`` with ``original`` (module docstring); errors name what does not match.

    Examples
    --------
    >>> o = pd.DataFrame({"age": [23, 41, 35], "s": list("aba")})
    >>> r = pd.DataFrame({"age": ["[20-30[", "[40-50[", "*"]})
    >>> a = align(o, r, ["s"], None)
    >>> a.observed, a.suppressed.tolist(), a.released["age"].tolist()
    (['age'], [False, False, True], ['[20-30[', '[40-50[', '*'])
    """
    obs = _columns(original, release, sensitive, observed, key)
    for s in sensitive:
        if original[s].isna().any():
            raise ValidationError(
                f"`sensitive` must have no missing value in the original; got "
                f"{int(original[s].isna().sum()):,} in {s!r}."
            )
    pos = _positions(original, release, key)
    n = len(original)
    listed = np.zeros(n, dtype=bool)
    listed[pos] = True
    orig = pd.DataFrame({c: as_text(original[c].reset_index(drop=True)) for c in obs})
    released = pd.DataFrame(index=range(n))
    for c in obs:
        values = release[c]
        text = as_text(values).where(values.notna(), SUPPRESSED).str.strip()
        col = np.full(n, SUPPRESSED, dtype=object)
        col[pos] = np.where(text.to_numpy() == "", SUPPRESSED, text.to_numpy())
        released[c] = col
    states = np.stack(
        [classify(orig[c], released[c].astype(str)) for c in obs], axis=1
    ) if obs else np.zeros((n, 0), dtype=np.int8)  # fmt: skip
    frame = original[[*sensitive, *obs]].reset_index(drop=True)
    return Aligned(frame, released, list(sensitive), obs, listed, states, key, len(release))
