"""Generalisation hierarchies: per observed column, levels from the original value up to ``*``.

A hierarchy is a table whose first column holds a column's original values (as text) and whose
next columns hold ever coarser labels, the last one ``*`` (the format ARX uses). Level 0 is the
original value. Global recoding releases every record of a column at one level; local recoding
picks a level per equivalence class.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from ..._validation import check_specs
from ...exceptions import ValidationError
from ...preprocessing import interval_labels
from ._distinct import KeyCodes, distinct_values

__all__ = [
    "AUTO_INTERVALS",
    "SUPPRESSED",
    "Hierarchy",
    "as_text",
    "auto_hierarchy",
    "build_hierarchies",
    "nested_intervals",
    "parse_hierarchy_specs",
]

#: The label of a fully generalised (or suppressed) value.
SUPPRESSED = "*"
#: The finest level of :func:`nested_intervals`: 16 quantile intervals, then 8, 4, 2 and ``*``.
AUTO_INTERVALS = 16


def numeric_or_none(values: pd.Series) -> pd.Series | None:
    """``values`` as numbers when they all are (an object column of Python ints or floats, as an
    engine's count table returns them), else None."""
    if pd.api.types.is_bool_dtype(values):
        return None
    if pd.api.types.is_numeric_dtype(values):
        return values
    # pandas' C type inference: every present value an int or float (not a bool), at C speed
    # (a Python check of the 1.9M rows of a 100M-record count table took 40 s per call)
    numbers = ("integer", "floating", "mixed-integer-float")
    if values.dtype == object and values.notna().any() and infer_dtype(values) in numbers:
        return pd.to_numeric(values)
    return None


def as_text(values: pd.Series) -> pd.Series:
    """Values as the text a hierarchy file holds: integral floats lose their ``.0``."""
    numeric = numeric_or_none(values)
    values = values if numeric is None else numeric
    if pd.api.types.is_float_dtype(values):
        finite = values.dropna()
        if len(finite) and np.all(np.mod(finite.to_numpy(), 1) == 0):
            return values.map(lambda v: str(int(v)) if pd.notna(v) else str(v))
    return values.astype(str)


@dataclass(frozen=True)
class Hierarchy:
    """The generalisation levels of one column.

    Attributes
    ----------
    column : str
        The observed column.
    values : tuple of str
        The original values (level 0), as text.
    labels : tuple of tuple of str
        ``labels[level][i]``: the label of ``values[i]`` at ``level``; the last level is all ``*``.
    origin : str
        Where the hierarchy comes from, in words, for the audit's settings (``""``: given).
    """

    column: str
    values: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    origin: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.values:
            raise ValidationError(f"the hierarchy of {self.column!r} must list values; got none.")
        if len(set(self.values)) != len(self.values):
            raise ValidationError(f"the hierarchy of {self.column!r} lists a value twice.")
        for level, row in enumerate(self.labels):
            if len(row) != len(self.values):
                raise ValidationError(
                    f"the hierarchy of {self.column!r} must give every value a label at every "
                    f"level; level {level} has {len(row)} labels for {len(self.values)} values."
                )
        if any(v != SUPPRESSED for v in self.labels[-1]):
            raise ValidationError(
                f"the last level of the hierarchy of {self.column!r} must be {SUPPRESSED!r} for "
                "every value."
            )
        for level in range(1, len(self.labels)):
            finer, coarser = self.labels[level - 1], self.labels[level]
            parent: dict[str, str] = {}
            for a, b in zip(finer, coarser, strict=True):
                if parent.setdefault(a, b) != b:
                    raise ValidationError(
                        f"the hierarchy of {self.column!r} must be nested: label {a!r} of level "
                        f"{level - 1} maps to both {parent[a]!r} and {b!r} at level {level}."
                    )

    @property
    def n_levels(self) -> int:
        """Number of levels, the original values and ``*`` included."""
        return len(self.labels)

    def codes(self, values: pd.Series, keys: KeyCodes | None = None) -> np.ndarray:
        """Index of each value in :attr:`values`; a value the hierarchy lacks is an error.

        Values are matched as text (integral floats without their ``.0``); a numeric column's
        values not matched so are then matched by number, so that the file's ``3`` (or
        ``3.0``) matches 3 whether the column was read as int or as float. ``keys``: the
        factorised table ``values`` is this hierarchy's column of (:class:`KeyCodes`).
        """
        distinct = distinct_values(values, keys, self.column)
        if distinct is not None:  # the same codes, from the distinct values
            uniques, inverse = distinct
            return np.asarray(self.codes(uniques)[inverse], dtype=np.int64)
        text = as_text(values)
        index = pd.Index(self.values).get_indexer(pd.Index(text))
        if (index < 0).any():
            numeric = numeric_or_none(values)
            if numeric is not None:
                index = np.where(index < 0, self._numeric_index(numeric), index)
        if (index < 0).any():
            missing = sorted(set(text[index < 0]))[:5]
            raise ValidationError(
                f"the hierarchy of {self.column!r} must list every value of the column; "
                f"missing {missing}."
            )
        return index.astype(np.int64)

    def _numeric_index(self, numbers: pd.Series) -> np.ndarray:
        """Index of each number among the values that read as numbers (-1: none)."""
        keys = pd.to_numeric(pd.Series(self.values), errors="coerce").to_numpy(dtype=float)
        first = ~pd.Series(keys).duplicated().to_numpy() & ~np.isnan(keys)
        positions = np.flatnonzero(first)
        if not len(positions):
            return np.full(len(numbers), -1, dtype=np.int64)
        found = pd.Index(keys[first]).get_indexer(numbers.to_numpy(dtype=float))
        return np.where(found < 0, -1, positions[np.maximum(found, 0)])

    def level_codes(self) -> list[tuple[np.ndarray, list[str]]]:
        """Per level: the label code of every value and the label texts."""
        out = []
        for row in self.labels:
            codes, uniques = pd.factorize(pd.Index(row))
            out.append((codes.astype(np.int64), [str(u) for u in uniques]))
        return out

    @classmethod
    def from_file(cls, path: str | Path, column: str) -> Hierarchy:
        """Read an ARX-style hierarchy file: headerless, ``;`` or ``,`` separated.

        The first field is the original value, the next ones ever coarser labels; a missing
        final ``*`` level is added.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidationError(
                f"`hierarchies` for {column!r} must be a readable UTF-8 file; got {str(p)!r} "
                f"({exc})."
            ) from None
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            raise ValidationError(f"the `hierarchies` file {str(p)!r} for {column!r} is empty.")
        sep = ";" if ";" in lines[0] else ","
        rows = [[field.strip() for field in r] for r in csv.reader(lines, delimiter=sep)]
        width = {len(r) for r in rows}
        if len(width) != 1:
            raise ValidationError(
                f"the `hierarchies` file {str(p)!r} for {column!r} must have the same number of "
                f"fields on every line; got {sorted(width)}."
            )
        if rows[0][-1] != SUPPRESSED or any(r[-1] != SUPPRESSED for r in rows):
            rows = [[*r, SUPPRESSED] for r in rows]
        levels = tuple(tuple(r[i] for r in rows) for i in range(len(rows[0])))
        return cls(column, levels[0], levels)


def _numeric_levels(values: pd.Series, n_levels: int, w: pd.Series) -> list[list[str]]:
    """Nested intervals by quantiles: ``n_levels`` cut sets, each a subset of the finer one."""
    keep = values.notna()
    per_value = w[keep].groupby(values[keep].astype(float).to_numpy()).sum().sort_index()
    uniq = per_value.index.to_numpy(dtype=float)
    weights = per_value.to_numpy(dtype=float)
    cdf = np.cumsum(weights) / weights.sum()
    levels: list[list[str]] = []
    for k in (2**j for j in range(n_levels, 0, -1)):
        cut_idx = np.unique(np.searchsorted(cdf, np.arange(1, k) / k, side="left"))
        cut_idx = cut_idx[cut_idx < len(uniq) - 1]
        edges = [uniq[0], *[uniq[i + 1] for i in cut_idx]]
        edges = sorted(set(edges))
        if levels and edges == levels[-1]:
            continue
        levels.append([*map(float, edges)])  # type: ignore[list-item]
    out: list[list[str]] = []
    for edges_f in levels:
        edges_a = np.asarray(edges_f, dtype=float)
        idx = np.searchsorted(edges_a, uniq, side="right") - 1
        hi = [*edges_a[1:], math.inf]
        labels = []
        for i in idx:
            lo_txt = _num(edges_a[i])
            labels.append(f">={lo_txt}" if math.isinf(hi[i]) else f"[{lo_txt}, {_num(hi[i])})")
        out.append(labels)
    return out


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def auto_hierarchy(
    values: pd.Series,
    column: str,
    *,
    max_levels: int = 4,
    weights: np.ndarray | None = None,
    keys: KeyCodes | None = None,
) -> Hierarchy:
    """A hierarchy built from the data.

    Numeric columns get nested quantile intervals (``2^k`` bins, halved at each level);
    categorical ones merge the rarest values first: level 1 keeps the values holding 95 % of
    the records and merges the rest into ``"other"``, level 2 the values holding 50 %, then ``*``.
    ``weights`` (records per row, for a count table) weigh the quantiles and the shares.
    ``keys``: the factorised table ``values`` is the column ``column`` of (:class:`KeyCodes`).
    """
    distinct = distinct_values(values, keys, column)
    w_rows = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float)
    if distinct is not None and _exact_sums(w_rows):
        # the same hierarchy from the distinct values and their summed weights (whole numbers
        # below 2^53: every order of summation gives the same sums)
        uniques, inverse = distinct
        summed = np.bincount(inverse, weights=w_rows, minlength=len(uniques))
        return auto_hierarchy(uniques, column, max_levels=max_levels, weights=summed)
    w = pd.Series(
        np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float),
        index=values.index,
    )
    text = as_text(values)
    uniq = pd.Index(pd.unique(text))
    numeric = numeric_or_none(values)
    if numeric is not None:
        values = numeric
        order = np.argsort(pd.Series(pd.unique(values)).astype(float).to_numpy(), kind="stable")
        raw = pd.Series(pd.unique(values)).iloc[order]
        uniq = pd.Index(as_text(raw))
        coarse = _numeric_levels(values, max_levels - 1, w) if len(uniq) > 2 else []
        # each coarse level is over the sorted distinct values
        levels = [tuple(uniq), *(tuple(lv) for lv in coarse if len(set(lv)) < len(uniq))]
    else:
        freq = w.groupby(text.to_numpy()).sum().sort_values(ascending=False, kind="stable")
        uniq = pd.Index(freq.index)
        share = np.cumsum(freq.to_numpy()) / freq.sum()
        levels = [tuple(uniq)]
        for keep_share in (0.95, 0.5):
            n_keep = int(np.searchsorted(share, keep_share) + 1)
            if 1 < n_keep < len(uniq):
                kept = set(uniq[:n_keep])
                prev = levels[-1]
                row = tuple(
                    orig if orig in kept and prev[i] == orig else "other"
                    for i, orig in enumerate(uniq)
                )
                if len(set(row)) < len(set(prev)):
                    levels.append(row)
    levels.append(tuple(SUPPRESSED for _ in uniq))
    return Hierarchy(column, tuple(uniq), tuple(levels))


def _exact_sums(weights: np.ndarray) -> bool:
    """Whether sums of ``weights`` are exact in any order: whole numbers, total below 2^53."""
    return bool(
        np.all(weights >= 0) and np.all(weights == np.floor(weights)) and weights.sum() < 2**53
    )


def _cut_points(values: pd.Series, k: int, weights: np.ndarray | None) -> np.ndarray:
    """Cut points of ``k`` (weighted) quantile intervals, each a value of the column.

    A cut is placed at the first value past each CDF level ``j / k``; the levels of ``k / 2``
    are a subset of those of ``k`` (dyadic fractions are exact), so the cut sets nest.
    """
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    w = np.ones(len(numbers)) if weights is None else np.asarray(weights, dtype=float)
    keep = ~np.isnan(numbers)
    per_value = pd.Series(w[keep]).groupby(numbers[keep]).sum().sort_index()
    uniq = per_value.index.to_numpy(dtype=float)
    if len(uniq) < 2:
        return np.zeros(0)
    cdf = np.cumsum(per_value.to_numpy(dtype=float)) / float(per_value.sum())
    cut = np.unique(np.searchsorted(cdf, np.arange(1, k) / k, side="left"))
    return np.asarray(uniq[cut[cut < len(uniq) - 1] + 1], dtype=float)


def nested_intervals(
    values: pd.Series,
    column: str,
    *,
    n_intervals: int = AUTO_INTERVALS,
    weights: np.ndarray | None = None,
    missing_label: str | None = None,
) -> tuple[list[float], Hierarchy]:
    """Nested quantile intervals of a numeric column: its cut points and their hierarchy.

    Level 0 holds ``n_intervals`` (weighted) quantile intervals, labelled as
    :func:`privwatch.preprocessing.bin_columns` labels the bins of the returned cut points
    (``<22``, ``[22, 25)``, ..., ``>=61``); each next level halves the number of intervals
    (16, 8, 4, 2), by keeping every other cut point, then ``*``. Cut points are values of the
    column. ``missing_label`` (the label of a missing value) is kept as its own value up to
    ``*``.

    Examples
    --------
    >>> edges, h = nested_intervals(pd.Series(range(100)), "age", n_intervals=4)
    >>> edges
    [25.0, 50.0, 75.0]
    >>> [sorted(set(level)) for level in h.labels][1:]
    [['<50', '>=50'], ['*']]
    """
    finest = _cut_points(values, n_intervals, weights)
    levels: list[tuple[str, ...]] = []
    if len(finest):
        lower = np.concatenate([[-math.inf], finest])  # each fine interval's lower edge
        k = n_intervals
        while k >= 2:
            edges = _cut_points(values, k, weights)
            if len(edges):
                names = interval_labels(edges)
                row = tuple(names[i] for i in np.searchsorted(edges, lower, side="right"))
                if not levels or len(set(row)) < len(set(levels[-1])):
                    levels.append(row)
            k //= 2
    else:
        levels.append(tuple(as_text(pd.Series(pd.unique(values.dropna())))))
    if missing_label is not None:
        levels = [(*row, missing_label) for row in levels]
    levels.append(tuple(SUPPRESSED for _ in levels[0]))
    n_intervals = len(levels[0]) - (missing_label is not None)
    origin = f"automatic: {n_intervals} nested quantile intervals"
    return [float(e) for e in finest], Hierarchy(column, levels[0], tuple(levels), origin)


def parse_hierarchy_specs(specs: Sequence[str]) -> dict[str, Path]:
    """Parse ``COL=FILE`` strings into a ``hierarchies`` mapping (see ``find_release``).

    Errors name ``hierarchies``, the parameter the parsed mapping is given to.

    Examples
    --------
    >>> parse_hierarchy_specs(["age=hierarchies/age.csv"])["age"].name
    'age.csv'
    """
    return {col: Path(path) for col, path in check_specs(specs, "hierarchies")}


def build_hierarchies(
    frame: pd.DataFrame,
    observed: Sequence[str],
    files: Mapping[str, str | Path | Hierarchy] | None = None,
    *,
    weights: np.ndarray | None = None,
    keys: KeyCodes | None = None,
) -> dict[str, Hierarchy]:
    """One hierarchy per observed column: from ``files`` where given, built from the data else
    (``keys``: ``frame`` factorised, :class:`KeyCodes`)."""
    files = dict(files or {})
    unknown = sorted(set(files) - set(observed))
    if unknown:
        raise ValidationError(f"`hierarchies` names columns that are not observed: {unknown}.")
    out: dict[str, Hierarchy] = {}
    for col in observed:
        given = files.get(col)
        if isinstance(given, Hierarchy):
            out[col] = given
        elif given is not None:
            out[col] = Hierarchy.from_file(given, col)
        else:
            out[col] = auto_hierarchy(frame[col], col, weights=weights, keys=keys)
    return out
