"""Validation and preparation of a user's table before an audit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..exceptions import ValidationError
from ..preprocessing import BinSpec, bin_columns

__all__ = ["MISSING_POLICIES", "prepare_table"]

MISSING_POLICIES = ("error", "drop", "category")
MISSING_LABEL = "<missing>"


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
    identifier) unless ``force``.
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
    frame = df[[sensitive, *cols]].copy()
    summary: dict[str, int] = {"n_input": len(frame), "n_dropped_missing": 0}
    na = frame.isna().sum()
    na = na[na > 0]
    if len(na):
        if missing == "error":
            detail = ", ".join(f"{c} ({n})" for c, n in na.items())
            raise ValidationError(
                f"the data must have no missing values; got them in {detail}: choose "
                "--missing drop or --missing category."
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
    if not force and len(frame) > 20:
        ids = [c for c in cols if frame[c].nunique() == len(frame)]
        if ids:
            raise ValidationError(
                f"observed column(s) {ids} have a distinct value in every record (identifiers "
                "leak everything and cannot be estimated); drop them or pass --force."
            )
    if bins:
        frame = bin_columns(frame, {c: v for c, v in bins.items() if c in cols})
    if missing == "category":
        for c in cols:
            if not frame[c].isna().any():
                continue
            if pd.api.types.is_numeric_dtype(frame[c]):
                raise ValidationError(
                    f"numeric column {c!r} has missing values: bin it first (--bins {c}=k) so "
                    "that missing becomes its own bin, or use --missing drop."
                )
            frame[c] = frame[c].astype(object).where(frame[c].notna(), MISSING_LABEL).astype(str)
    return frame.reset_index(drop=True), cols, summary
