"""Writing an audit to a folder: CSVs, JSON, PNGs and the HTML report, all or nothing."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ._audit import AuditResult
from ._figures import plot_curve, plot_risk
from ._html import render_report

__all__ = [
    "OUTPUT_FILES",
    "STAGING_PREFIX",
    "check_writable",
    "jsonable",
    "staged_files",
    "write_audit",
]

OUTPUT_FILES = (
    "scores.csv",
    "release.csv",
    "frontier.csv",
    "leakage.json",
    "tradeoff.png",
    "lift.png",
    "report.html",
)
STAGING_PREFIX = ".privwatch-staging-"


def _clean_stale(out: Path) -> None:
    for p in out.glob(STAGING_PREFIX + "*"):
        shutil.rmtree(p, ignore_errors=True)
    for p in out.glob(".privwatch-check-*"):
        p.unlink(missing_ok=True)


def check_writable(out: Path, overwrite: bool = True) -> None:
    """Create ``out`` if needed and make sure files can be written there (before any work).

    Staging folders an interrupted earlier run left behind are removed. With
    ``overwrite=False`` a folder that already holds files is refused.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValidationError(f"--out must be a writable folder; got the file {str(out)!r}.")
    if out.is_dir():
        _clean_stale(out)
        if not overwrite and any(out.iterdir()):
            raise ValidationError(
                f"--out must be an empty or new folder; got {str(out)!r}, which holds files: "
                "pass --overwrite to replace the outputs there."
            )
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".privwatch-check-"):
            pass
    except OSError as exc:
        raise ValidationError(
            f"--out must be a writable folder; got {str(out)!r} ({exc.strerror or exc})."
        ) from None


def jsonable(value: Any) -> Any:
    """Plain JSON types: non-finite floats as the strings 'inf', '-inf', 'nan'."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def leakage_payload(result: AuditResult) -> dict[str, Any]:
    """The content of leakage.json (see :data:`privwatch.report.SCHEMA`)."""
    payload = {
        "stamp": result.stamp,
        "settings": result.settings,
        "summary": result.summary,
        "epsilon": result.epsilon,
        "epsilon_reason": result.epsilon_reason,
        **result.leakage,
        "warnings": result.warnings,
        "tradeoff": result.tradeoff.to_dict(orient="list"),
    }
    out: dict[str, Any] = jsonable(payload)
    return out


class _Terminated(BaseException):
    """SIGTERM turned into an exception, so that ``finally`` blocks clean up."""


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated(f"terminated by signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the outputs are moved in (delivered right after)."""
    sigs = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def staged_files(out: Path, names: tuple[str, ...]) -> Iterator[Path]:
    """A hidden staging folder inside ``out`` to write ``names`` into; when the block ends
    normally they are moved into ``out`` in that order (stale copies removed first), with
    SIGINT and SIGTERM held during the move. An interruption (SIGINT, or SIGTERM turned into an
    exception) or a failure removes the staging folder, so nothing half-written survives."""
    with _sigterm_raises():
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
        try:
            yield staging
            with _signals_held():
                for name in names:
                    (out / name).unlink(missing_ok=True)
                for name in names:
                    os.replace(staging / name, out / name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _plots(result: AuditResult, folder: Path) -> None:
    plot_curve(
        result.tradeoff,
        result.watchdog.guarantee_.effective_epsilon,
        result.epsilon,
        folder / "tradeoff.png",
    )
    plot_risk(
        result.scores["risk"].to_numpy(),
        result.epsilon,
        folder / "lift.png",
        result.scores["flagged"].to_numpy(),
    )


def _with_rows(frame: pd.DataFrame, result: AuditResult) -> pd.DataFrame:
    rows = result.input_rows
    out = frame.copy()
    if len(rows) == len(frame):
        out.index = pd.Index(rows, name="record")
    else:
        out.index.name = "record"
    return out


def write_audit(result: AuditResult, out: Path, overwrite: bool = True) -> list[Path]:
    """Write every output of the audit into ``out``.

    Files are first written to a hidden staging folder inside ``out`` and moved in only when
    all of them exist, ``report.html`` last, with SIGINT and SIGTERM held during the move; an
    interruption (SIGINT, or SIGTERM, which is turned into an exception) or a failure removes
    the staging folder, so nothing half-written survives. The ``record`` column of scores.csv
    and release.csv is the row number of the record in the input (0-based), kept when rows
    with missing values are dropped.
    """
    out = Path(out)
    check_writable(out, overwrite)
    with staged_files(out, OUTPUT_FILES) as staging:  # report.html is moved in last
        _with_rows(result.scores, result).to_csv(staging / "scores.csv")
        _with_rows(result.release, result).to_csv(staging / "release.csv")
        frontier = pd.DataFrame(result.leakage.get("frontier") or [])
        frontier.to_csv(staging / "frontier.csv", index=False)
        text = json.dumps(leakage_payload(result), indent=2)
        (staging / "leakage.json").write_text(text, encoding="utf-8")
        _plots(result, staging)
        html = render_report(result, staging)
        (staging / "report.html").write_text(html, encoding="utf-8")
    return [out / name for name in OUTPUT_FILES]
