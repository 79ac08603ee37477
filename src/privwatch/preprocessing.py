"""Tabular preprocessing shared by :class:`~privwatch.Joint`, the watchdog and the CLI.

- :func:`bin_columns` — explicit binning of numeric columns (``bins=`` per column);
- :func:`check_discrete` — refuses numeric columns with too many distinct values to be treated
  as categories, naming each one;
- :class:`ObservedEncoder` — turns the value tuples of the observed columns into integer symbols,
  fast enough for tens of millions of rows, and maps new rows onto the fitted symbols.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._encoder import ObservedEncoder, require_columns
from ._memory import BYTES_PER_QUANTILE_BIN, check_size
from ._validation import check_positive_int, check_specs
from .exceptions import ValidationError

__all__ = [
    "DEFAULT_MAX_LEVELS",
    "BinSpec",
    "ObservedEncoder",
    "bin_columns",
    "check_discrete",
    "format_bins",
    "interval_labels",
    "parse_bins",
]

#: A numeric column with more distinct values than this must be binned explicitly.
DEFAULT_MAX_LEVELS = 50

BinSpec = int | Sequence[float]


def bin_columns(df: pd.DataFrame, bins: Mapping[str, BinSpec]) -> pd.DataFrame:
    """Return a copy of ``df`` with numeric columns replaced by interval labels.

    Parameters
    ----------
    df : DataFrame
    bins : mapping column -> int or sequence of floats
        An int ``k`` makes (at most) ``k`` equal-frequency bins (quantiles of this data); a
        sequence gives increasing cut points ``e1 < ... < ek`` and the bins
        ``(-inf, e1), [e1, e2), ..., [ek, inf)``, so no value is dropped.

    Examples
    --------
    >>> d = pd.DataFrame({"age": [19, 30, 52]})
    >>> bin_columns(d, {"age": [25, 45]})["age"].tolist()
    ['<25', '[25, 45)', '>=45']
    """
    require_columns(df, list(bins))
    out = df.copy()
    for col, spec in bins.items():
        values = pd.to_numeric(df[col], errors="coerce")
        if values.isna().any() and not df[col].isna().all():
            bad = df[col][values.isna() & df[col].notna()]
            if len(bad):
                raise ValidationError(
                    f"`bins[{col!r}]` needs a numeric column; got non-numeric value "
                    f"{bad.iloc[0]!r}."
                )
        if isinstance(spec, (bool, str)) or not isinstance(
            spec, (int, np.integer, Sequence, np.ndarray)
        ):
            raise ValidationError(
                f"`bins[{col!r}]` must be an int or a sequence of cut points; got {spec!r}."
            )
        if isinstance(spec, (int, np.integer)):
            if spec < 2:
                raise ValidationError(f"`bins[{col!r}]` must be at least 2; got {spec}.")
            check_size(f"bins[{col!r}]", (int(spec) + 1) * BYTES_PER_QUANTILE_BIN)
            qs = np.quantile(values.dropna(), np.linspace(0, 1, int(spec) + 1)[1:-1])
            edges = np.unique(qs)
        else:
            edges = np.asarray(spec, dtype=float)
            if edges.ndim != 1 or edges.size == 0 or np.any(np.diff(edges) <= 0):
                raise ValidationError(
                    f"`bins[{col!r}]` must be strictly increasing cut points; got {list(spec)!r}."
                )
        labels = interval_labels(edges)
        raw = values.to_numpy(dtype=float)
        idx = np.where(np.isnan(raw), -1, np.searchsorted(edges, raw, side="right"))
        codes = idx.astype(np.int64)
        out[col] = pd.Categorical.from_codes(codes, categories=pd.Index(labels))
    return out


def _fmt(v: float) -> str:
    return f"{v:g}"


def interval_labels(edges: NDArray[np.float64] | Sequence[float]) -> list[str]:
    """The labels of the bins of increasing cut points ``e1 < ... < ek``, as
    :func:`bin_columns` writes them.

    >>> interval_labels([25, 45])
    ['<25', '[25, 45)', '>=45']
    """
    try:
        if np.iscomplexobj(edges):
            raise TypeError
        edges = np.asarray(edges, dtype=float)
    except (TypeError, ValueError):
        raise ValidationError(
            f"`edges` must be increasing finite cut points; got {edges!r}."
        ) from None
    if (
        edges.ndim != 1
        or edges.size == 0
        or not np.isfinite(edges).all()
        or (np.diff(edges) <= 0).any()
    ):
        raise ValidationError(
            f"`edges` must be a non-empty 1-D array of increasing finite cut points; got {edges!r}."
        )
    labels = [f"<{_fmt(edges[0])}"]
    labels += [f"[{_fmt(a)}, {_fmt(b)})" for a, b in itertools.pairwise(edges)]
    labels.append(f">={_fmt(edges[-1])}")
    if len(set(labels)) < len(labels):  # edges closer than the short format shows
        full = edges.tolist()  # Python floats: repr is the shortest exact form
        labels = [f"<{full[0]!r}", *(f"[{a!r}, {b!r})" for a, b in itertools.pairwise(full))]
        labels.append(f">={full[-1]!r}")
    return labels


def parse_bins(specs: Sequence[str]) -> dict[str, BinSpec]:
    """Parse CLI bin specs ``col=k`` or ``col=e1,e2,...`` into a :func:`bin_columns` mapping.

    >>> parse_bins(["age=25,45", "priors=4"])
    {'age': [25.0, 45.0], 'priors': 4}
    """
    out: dict[str, BinSpec] = {}
    for col, rhs in check_specs(specs, "bins"):
        try:
            out[col] = (
                int(rhs)
                if "," not in rhs and "." not in rhs
                else [float(v) for v in rhs.split(",")]
            )
        except ValueError:
            out[col] = []
        if out[col] == [] or (isinstance(out[col], list) and not np.isfinite(out[col]).all()):
            raise ValidationError(
                f"`bins` must look like col=k or col=e1,e2,... with finite edges; "
                f"got {col}={rhs!r}."
            )
    return out


def format_bins(spec: Mapping[str, BinSpec]) -> str:
    """The inverse of :func:`parse_bins`, for messages.

    >>> format_bins({"age": [25.0, 45.0], "priors": 4})
    'age=25,45 priors=4'
    """
    return " ".join(
        f"{c}={v}" if isinstance(v, (int, np.integer)) else f"{c}={','.join(f'{e:g}' for e in v)}"
        for c, v in spec.items()
    )


def check_discrete(
    df: pd.DataFrame, columns: Sequence[str], max_levels: int | None = DEFAULT_MAX_LEVELS
) -> None:
    """Raise a :class:`ValidationError` naming every column that needs explicit binning.

    A numeric column with more than ``max_levels`` distinct values is not treated as a set of
    categories (each float would become its own symbol and every lift estimate would rest on one
    record). ``max_levels=None`` disables the check; otherwise it must be a positive int.
    """
    require_columns(df, columns)
    if max_levels is None:
        return
    check_positive_int(max_levels, "max_levels")
    offenders = []
    for col in columns:
        series = df[col]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            n = int(series.nunique(dropna=True))
            if n > max_levels:
                offenders.append(f"{col!r} ({n} distinct values)")
    if offenders:
        raise ValidationError(
            "numeric columns with many values must be binned explicitly; got "
            + ", ".join(offenders)
            + f" (more than `max_levels` = {max_levels}). Bin them with `bins`: col=5 (five "
            "quantile bins) or col=25,45 (cut points); in Python also "
            "privwatch.bin_columns(df, {col: 5})."
        )
