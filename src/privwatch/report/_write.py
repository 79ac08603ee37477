"""Writing an audit to a folder: CSVs, JSON, PNGs and the HTML report, all or nothing."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..plotting import plot_lift_scatter, plot_tradeoff, save
from ._audit import AuditResult
from ._html import render_report

__all__ = ["OUTPUT_FILES", "check_writable", "write_audit"]

OUTPUT_FILES = (
    "scores.csv",
    "release.csv",
    "frontier.csv",
    "leakage.json",
    "tradeoff.png",
    "lift.png",
    "report.html",
)


def check_writable(out: Path) -> None:
    """Create ``out`` if needed and make sure files can be written there (before any work)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".privwatch-check-"):
            pass
    except OSError as exc:
        raise ValidationError(
            f"--out must be a writable folder; got {str(out)!r} ({exc.strerror or exc})."
        ) from None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _plots(result: AuditResult, folder: Path) -> None:
    curve = result.tradeoff
    x = curve["optimal_epsilon"] if "optimal_epsilon" in curve else curve["gamma_bound"]
    label = (
        "exact lift-privacy level of the release (nats)"
        if "optimal_epsilon" in curve
        else "leakage bound gamma, Prop. 2 (nats)"
    )
    ax = plot_tradeoff(
        {"watchdog release": (np.where(np.isfinite(x), x, np.nan), curve["utility_mi"])},
        xlabel=label,
    )
    ax.axvline(
        result.watchdog.guarantee_.epsilon,
        color="k",
        ls="--",
        lw=1,
        label=f"chosen: epsilon = {result.epsilon:.3g}",
    )
    ax.legend(fontsize=8)
    ax.set_title("Utility I(X;Y) against leakage over epsilon")
    save(ax, folder / "tradeoff.png")
    ll = result.log_lift
    flags = result.scores["flagged"].to_numpy()
    labels = [str(v) for v in result.watchdog.sensitive_labels_]
    if ll.shape[1] == 2:
        finite = np.isfinite(ll).all(axis=1)
        ax = plot_lift_scatter(
            ll[finite],
            epsilon=result.epsilon,
            highlight=flags[finite],
            labels=(f"i({labels[0]}, x)", f"i({labels[1]}, x)"),
        )
        ax.set_title(
            f"Log-lift of every record\n({int((~finite).sum())} with an infinite value not drawn)"
        )
    else:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
        risk = result.scores["risk"].to_numpy()
        ax.hist(np.minimum(risk[np.isfinite(risk)], 10), bins=50)
        ax.axvline(result.epsilon, color="k", ls="--", label=f"epsilon = {result.epsilon:.3g}")
        ax.set_xlabel("risk max_s |i(s, x)| (nats)")
        ax.set_ylabel("records")
        ax.legend()
    save(ax, folder / "lift.png")


def write_audit(result: AuditResult, out: Path) -> list[Path]:
    """Write every output of the audit into ``out``.

    Files are first written to a hidden staging folder beside ``out`` and moved in only when all
    of them exist, ``report.html`` last, so a failure never leaves a set that looks complete.
    """
    check_writable(out)
    staging = Path(tempfile.mkdtemp(prefix=".privwatch-staging-", dir=out))
    try:
        result.scores.to_csv(staging / "scores.csv", index_label="record")
        result.release.to_csv(staging / "release.csv", index_label="record")
        frontier = pd.DataFrame(result.leakage.get("frontier") or [])
        frontier.to_csv(staging / "frontier.csv", index=False)
        payload = {
            "settings": result.settings,
            "summary": result.summary,
            "epsilon": result.epsilon,
            "epsilon_reason": result.epsilon_reason,
            **result.leakage,
            "tradeoff": result.tradeoff.to_dict(orient="list"),
        }
        (staging / "leakage.json").write_text(json.dumps(_jsonable(payload), indent=2))
        _plots(result, staging)
        (staging / "report.html").write_text(render_report(result, staging), encoding="utf-8")
        for name in OUTPUT_FILES:  # remove stale outputs first, then move report.html last
            (out / name).unlink(missing_ok=True)
        for name in OUTPUT_FILES:
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / name for name in OUTPUT_FILES]
