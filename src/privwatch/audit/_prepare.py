"""Validation and preparation of a user's table before an audit."""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._memory import BYTES_PER_QUANTILE_BIN, check_size
from ..exceptions import PrivacyWarning, ValidationError
from ..preprocessing import BinSpec, bin_columns, check_discrete
from ..release import Hierarchy, as_text
from ..release.hierarchies import nested_intervals

__all__ = [
    "MISSING_POLICIES",
    "NEAR_IDENTIFIER_SHARE",
    "kept_rows",
    "prepare_rows",
    "prepare_table",
    "resolve_bins",
    "resolve_columns",
]

MISSING_POLICIES = ("error", "drop", "category")
MISSING_LABEL = "<missing>"
#: An observed column with at least this share of distinct values (e.g. a sampling weight)
#: is almost an identifier: the audit warns about it.
NEAR_IDENTIFIER_SHARE = 2 / 3


def kept_rows(df: pd.DataFrame, sensitive: str, cols: Sequence[str], missing: str) -> pd.Index:
    """Index labels of the input rows the missing-value policy keeps (before any binning)."""
    frame = df[[sensitive, *cols]]
    if missing == "drop" or (missing == "category" and frame[sensitive].isna().any()):
        return frame.dropna().index
    return frame.index


def resolve_bins(
    df: pd.DataFrame, bins: Mapping[str, BinSpec], rows: pd.Index | None = None
) -> dict[str, BinSpec]:
    """Quantile bins (``col=k``) replaced by their cut points on ``df`` (rows ``rows``).

    The binning is then the same as :func:`privwatch.preprocessing.bin_columns` computes, and
    explicit enough to be saved with a mechanism and applied to new records. Columns that are
    not numeric keep their spec (``bin_columns`` names the offending value).
    """
    out: dict[str, BinSpec] = {}
    for col, spec in bins.items():
        out[col] = spec
        if not isinstance(spec, (int, np.integer)) or isinstance(spec, bool) or spec < 2:
            continue
        if col not in df.columns:
            continue
        raw = df[col] if rows is None else df.loc[rows, col]
        values = pd.to_numeric(raw, errors="coerce")
        if (values.isna() & raw.notna()).any() or values.notna().sum() == 0:
            continue
        check_size(f"bins[{col!r}]", (int(spec) + 1) * BYTES_PER_QUANTILE_BIN)
        qs = np.quantile(values.dropna(), np.linspace(0, 1, int(spec) + 1)[1:-1])
        edges = [float(e) for e in np.unique(qs)]
        if edges:
            out[col] = edges
    return out


def resolve_columns(
    df: pd.DataFrame,
    sensitive: str,
    observed: Sequence[str] | None,
    *,
    bins: Mapping[str, BinSpec],
    hierarchies: Mapping[str, str | Path | Hierarchy],
    missing: str,
    max_levels: int | None,
    force: bool = False,
) -> tuple[dict[str, BinSpec], dict[str, str | Path | Hierarchy]]:
    """``(bins, hierarchies)`` of an audit: quantile bins resolved to cut points
    (:func:`resolve_bins`), and every numeric observed column with more than ``max_levels``
    distinct values and neither ``bins`` nor a hierarchy binned into nested quantile intervals:
    its 16 cut points join ``bins`` and the hierarchy of the intervals (16, 8, 4, 2, then
    ``*``; :func:`privwatch.release.hierarchies.nested_intervals`) joins ``hierarchies``. A
    column of integers with a distinct value in every record (a record number) gets none unless
    ``force``: :func:`prepare_rows` refuses it as an identifier.

    ``bins`` naming a column that is not observed (absent, or the sensitive one) is refused
    with the reason, as ``hierarchies`` and the engine route's bins are.

    ``max_levels=None`` adds no intervals (as on the learned-estimator routes, whose
    estimators read numbers as they are). Values and cut points come from the rows the
    missing-value policy keeps.
    """
    out_bins, out_hier = dict(bins), dict(hierarchies)
    if sensitive not in df.columns:
        return out_bins, out_hier  # prepare_rows names the column
    listed = [c for c in (observed or df.columns) if c != sensitive and c in df.columns]
    foreign = [c for c in out_bins if c not in listed]
    if foreign:  # a typo or the sensitive column would otherwise be left unbinned in silence
        raise ValidationError(
            f"`bins` names {foreign}, which are not observed columns of the data "
            f"(observed: {listed}); only observed columns are binned."
        )
    rows = kept_rows(df, sensitive, listed, missing)
    if out_bins:
        out_bins = resolve_bins(df, out_bins, rows)
    if max_levels is None:
        return out_bins, out_hier
    for col in listed:
        series = df.loc[rows, col]
        if (
            col in out_bins
            or col in out_hier
            or not pd.api.types.is_numeric_dtype(series)
            or pd.api.types.is_bool_dtype(series)
            or series.nunique() <= max_levels
            or (not force and _record_number(series))
        ):
            continue
        label = MISSING_LABEL if missing == "category" and series.isna().any() else None
        edges, hierarchy = nested_intervals(series, col, missing_label=label)
        out_bins[col], out_hier[col] = edges, hierarchy
    return out_bins, out_hier


def _record_number(series: pd.Series) -> bool:
    """Integers with a distinct value in every record: an identifier, not a measurement."""
    values = series.dropna().to_numpy(dtype=float)
    return (
        len(series) > 20
        and series.nunique() == len(series)
        and bool(np.all(np.mod(values, 1) == 0))
    )


def _measurement(series: pd.Series) -> bool:
    """A numeric column that is not a record number (a learned estimator reads it as a
    measurement: distinct values are what continuous columns have)."""
    return (
        pd.api.types.is_numeric_dtype(series)
        and not pd.api.types.is_bool_dtype(series)
        and not _record_number(series)
    )


def _check_identifiers(
    frame: pd.DataFrame, cols: Sequence[str], binned: set[str], force: bool, learned: bool = False
) -> None:
    """Refuse observed columns that identify every record; warn on nearly identifying ones.
    ``learned``: a learned estimator reads numbers as they are, so a numeric column that is
    not a record number is neither refused nor warned about (the refusal is about plug-in
    counts, where a distinct value per record is a cell of one)."""
    if learned:
        cols = [c for c in cols if not _measurement(frame[c])]
    if not force and len(frame) > 20:
        # after binning: `bins` rescues a continuous column that would look like an identifier
        ids = [c for c in cols if frame[c].nunique() == len(frame)]
        if ids:
            raise ValidationError(
                f"observed column(s) {ids} have a distinct value in every record (identifiers "
                "leak everything and cannot be estimated); drop them, bin them (`bins` COL=k) "
                "or pass `force`=True."
            )
    if len(frame) > 20:
        near = [
            c
            for c in cols
            if c not in binned and frame[c].nunique() >= NEAR_IDENTIFIER_SHARE * len(frame)
        ]
        for c in near:
            share = frame[c].nunique() / len(frame)
            warnings.warn(
                f"observed column {c!r} has a distinct value in {share:.0%} of the records: it "
                "is nearly an identifier (a record number or a sampling weight?); drop it or "
                f"bin it (`bins` {c}=k)",
                PrivacyWarning,
                stacklevel=4,
            )


def prepare_rows(
    df: pd.DataFrame,
    sensitive: str,
    observed: Sequence[str] | None,
    *,
    bins: Mapping[str, BinSpec] | None = None,
    missing: str = "error",
    force: bool = False,
    hierarchies: Collection[str] = (),
    max_levels: int | None = None,
    learned: bool = False,
) -> tuple[pd.DataFrame, list[str], dict[str, int], np.ndarray]:
    """:func:`prepare_table` plus the input row number (0-based position) of every kept record.

    ``learned``: the log-lift is learned (not plug-in counts): numeric columns that are not
    record numbers are accepted without ``force`` (continuous columns are measurements).

    ``hierarchies``: the columns with a hierarchy (a numeric one is then not held to
    ``max_levels``, and under ``missing="category"`` its values become text, a missing one
    ``<missing>``); ``max_levels``: see :func:`privwatch.preprocessing.check_discrete` (None:
    no check).
    """
    if missing not in MISSING_POLICIES:
        raise ValidationError(f"`missing` must be one of {MISSING_POLICIES}; got {missing!r}.")
    if sensitive not in df.columns:
        raise ValidationError(
            f"`sensitive` must name a column of the data; got {sensitive!r} "
            f"(columns: {', '.join(map(str, df.columns))})."
        )
    cols = [c for c in df.columns if c != sensitive] if observed is None else list(observed)
    absent = [c for c in cols if c not in df.columns]
    if absent:
        raise ValidationError(f"`observed` must name columns of the data; got missing {absent}.")
    if sensitive in cols:
        raise ValidationError(f"`observed` must not contain the sensitive column {sensitive!r}.")
    if not cols:
        raise ValidationError("`observed` must name at least one column; got none.")
    frame = df[[sensitive, *cols]].reset_index(drop=True)
    summary: dict[str, int] = {"n_input": len(frame), "n_dropped_missing": 0}
    na = frame.isna().sum()
    na = na[na > 0]
    if len(na):
        if missing == "error":
            detail = ", ".join(f"{c} ({n})" for c, n in na.items())
            raise ValidationError(
                f"the data must have no missing values; got them in {detail}: choose "
                "`missing`='drop' or `missing`='category'."
            )
        if missing == "drop" or sensitive in na.index:
            before = len(frame)
            frame = frame.dropna()
            summary["n_dropped_missing"] = before - len(frame)
    if len(frame) == 0:
        raise ValidationError("the data must have at least one complete record; got none.")
    n_sensitive = frame[sensitive].nunique()
    if n_sensitive < 2:
        raise ValidationError(
            f"`sensitive` must take at least two values; got {n_sensitive} in {sensitive!r}."
        )
    if bins:
        frame = bin_columns(frame, {c: v for c, v in bins.items() if c in cols})
    _check_identifiers(frame, cols, set(bins or {}), force, learned)
    check_discrete(frame, [c for c in cols if c not in hierarchies], max_levels)
    if missing == "category":
        for c in cols:
            if not frame[c].isna().any():
                continue
            if c in hierarchies and pd.api.types.is_numeric_dtype(frame[c]):
                # "3" as a hierarchy file writes it; a missing value is a value of the file too
                frame[c] = as_text(frame[c]).where(frame[c].notna(), MISSING_LABEL)
                continue
            if pd.api.types.is_numeric_dtype(frame[c]):
                raise ValidationError(
                    f"numeric column {c!r} has missing values: bin it first (`bins` {c}=k) so "
                    "that missing becomes its own bin, or use `missing`='drop'."
                )
            frame[c] = frame[c].astype(object).where(frame[c].notna(), MISSING_LABEL).astype(str)
    rows = frame.index.to_numpy(dtype=np.int64)
    return frame.reset_index(drop=True), cols, summary, rows


def prepare_table(
    df: pd.DataFrame,
    sensitive: str,
    observed: Sequence[str] | None,
    *,
    bins: Mapping[str, BinSpec] | None = None,
    missing: str = "error",
    force: bool = False,
) -> tuple[pd.DataFrame, list[str], dict[str, int]]:
    """Check columns, apply the missing-value policy and the binning.

    Returns the prepared frame (sensitive + observed columns only), the observed columns and a
    summary ``{"n_input": ..., "n_dropped_missing": ...}``. Refuses, with one-line messages: a
    missing column, a sensitive column with fewer than two values, missing values under
    ``missing="error"``, and an observed column with a distinct value in every row (an
    identifier) after binning, unless ``force``. Warns (:class:`PrivacyWarning`) about an
    unbinned observed column with distinct values in two thirds of the records or more.
    """
    frame, cols, summary, _ = prepare_rows(
        df, sensitive, observed, bins=bins, missing=missing, force=force
    )
    return frame, cols, summary
