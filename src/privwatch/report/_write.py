"""Writing an audit to a folder: CSVs, JSON, PNGs and the HTML report, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._files import STAGING_PREFIX, check_writable, staged_files
from ..audit import Audit
from ._figures import plot_curve, plot_frontier, plot_risk
from ._html import render_report

__all__ = [
    "COMMON_FILES",
    "DROPPED_COLUMN",
    "OUTPUT_FILES",
    "RECORD_FILES",
    "STAGING_PREFIX",
    "check_writable",
    "leakage_payload",
    "staged_files",
    "write_audit",
]

#: Files every route writes (report.html last).
COMMON_FILES = ("frontier.csv", "leakage.json", "tradeoff.png", "lift.png", "report.html")
#: The records of the in-memory route (the engine and streamed routes write the same two as
#: they go, as Parquet: :data:`privwatch.audit.RELEASE_FILE`, :data:`~privwatch.audit.SCORES_FILE`).
RECORD_FILES = ("scores.csv", "release.csv")
#: Every file of an in-memory audit, in the order it is written.
OUTPUT_FILES = (*RECORD_FILES, *COMMON_FILES)


def leakage_payload(result: Audit) -> dict[str, Any]:
    """The content of leakage.json (see :data:`privwatch.report.SCHEMA`)."""
    return result.to_dict()


def _plots(result: Audit, folder: Path) -> None:
    curve = result.tradeoff
    chosen = result.epsilon
    if len(curve) and "threshold" in curve:
        row = curve.iloc[int(np.argmin(np.abs(curve["threshold"].to_numpy() - result.epsilon)))]
        chosen = float(row["effective_epsilon"])
    if result.watchdog is not None:
        chosen = result.watchdog.guarantee_.effective_epsilon
    found = result.found
    if found is not None and found.frontier:
        plot_frontier(
            found.frontier,
            found.epsilon,
            found.information_nats,
            found.information_input_nats,
            folder / "tradeoff.png",
        )
    else:
        estimated = result.settings.get("estimator", "plugin") != "plugin"
        plot_curve(curve, chosen, result.epsilon, folder / "tradeoff.png", estimated)
    plot_risk(
        result.risk,
        result.epsilon,
        folder / "lift.png",
        result.risk > result.epsilon + 1e-12 if result.scores is None else result.flagged,
        result.risk_weight,
    )


#: The column of scores.csv and release.csv that marks the input records a missing-value
#: policy dropped (their other values are empty).
DROPPED_COLUMN = "dropped_missing"


def _with_rows(frame: pd.DataFrame, result: Audit) -> pd.DataFrame:
    """``frame`` indexed by ``record``, the input row number. With a missing-value policy
    that can drop records (``missing`` drop or category), one row per input record: the
    dropped ones have empty values and :data:`DROPPED_COLUMN` true."""
    rows = result.input_rows
    out = frame.copy()
    if len(rows) != len(frame):
        out.index.name = "record"
        return out
    out.index = pd.Index(rows, name="record")
    if result.settings.get("missing", "error") == "error":
        return out
    for col in out.columns:  # nullable dtypes: the empty rows keep ints as ints
        if pd.api.types.is_bool_dtype(out[col]):
            out[col] = out[col].astype("boolean")
        elif pd.api.types.is_integer_dtype(out[col]):
            out[col] = out[col].astype("Int64")
    n_input = int(result.summary.get("n_input", len(out)))
    out = out.reindex(pd.RangeIndex(n_input, name="record"))
    out[DROPPED_COLUMN] = ~out.index.isin(rows)
    return out


def write_audit(
    result: Audit, out: Path, overwrite: bool = True, records: bool = True
) -> list[Path]:
    """Write every output of the audit into ``out``; returns the paths written.

    Every route writes :data:`COMMON_FILES` (leakage.json, frontier.csv, the two figures and
    report.html); the in-memory route also the records (scores.csv, release.csv), whose
    ``record`` column is the row number of the record in the input (0-based); with
    ``missing`` drop or category they hold one row per input record, those dropped for a
    missing value marked in ``dropped_missing`` with empty values; the other routes wrote
    theirs while they ran (``Audit.written``). Files are first written to a hidden staging
    folder inside ``out`` and moved in only when all of them exist, ``report.html`` last, with
    SIGINT and SIGTERM held during the move; an interruption or a failure removes the staging
    folder, so nothing half-written survives. ``records=False`` (``--no-records``): no
    scores.csv nor release.csv.
    """
    out = Path(out)
    check_writable(out, overwrite)
    records = records and result.scores is not None and result.release is not None
    names = OUTPUT_FILES if records else COMMON_FILES
    with staged_files(out, names) as staging:  # report.html is moved in last
        if records and result.scores is not None and result.release is not None:
            _with_rows(result.scores, result).to_csv(staging / "scores.csv")
            _with_rows(result.release, result).to_csv(staging / "release.csv")
        frontier = pd.DataFrame(result.leakage.get("frontier") or [])
        frontier.to_csv(staging / "frontier.csv", index=False)
        text = json.dumps(leakage_payload(result), indent=2, allow_nan=False)
        (staging / "leakage.json").write_text(text, encoding="utf-8")
        _plots(result, staging)
        html = render_report(result, staging)
        (staging / "report.html").write_text(html, encoding="utf-8")
    written = [out / name for name in names]
    written += [Path(w) for w in result.written or [] if not w.startswith("table ")]
    return written
