"""Fit once, apply to new batches: the fitted generalisation as a JSON file (no pickle).

The file holds the binning of numeric columns (explicit cut points) and the table of every
observed value tuple seen at fit time with its released tuple (:func:`mapping_table`). Loading it
runs no code. **Rule for values never seen at fit time**: a record whose tuple of (binned)
observed values is not in the table is released as the suppressed cell, ``*`` in every observed
column, and counted in :attr:`AppliedRelease.n_unseen`. The guarantee of the audit is exact for
the fitted records only; for a new batch, the audit's held-out check is the estimate of what it
is worth, and re-auditing the batch (``privwatch audit``) measures it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..preprocessing import bin_columns
from ._audit import AuditResult
from ._checks import map_through
from ._stamp import privwatch_version

__all__ = [
    "MECHANISM_FORMAT",
    "AppliedRelease",
    "apply_mechanism",
    "load_mechanism",
    "save_mechanism",
]

MECHANISM_FORMAT = "privwatch-generalisation"
MECHANISM_VERSION = 1


def mechanism_dict(result: AuditResult) -> dict[str, Any]:
    """The JSON-ready description of an audit's fitted generalisation."""
    if result.found is None or result.mechanism is None:
        raise ValidationError(
            "--save-mechanism needs the searched release of the plug-in route (no --delta, "
            "--estimator plugin); got an audit without one."
        )
    found = result.found
    obs = list(result.settings["observed"])
    table = result.mechanism
    return {
        "format": MECHANISM_FORMAT,
        "version": MECHANISM_VERSION,
        "privwatch_version": privwatch_version(),
        "sensitive": result.settings["sensitive"],
        "observed": obs,
        "bins": {k: v for k, v in result.settings.get("bins", {}).items() if k in obs},
        "epsilon": found.epsilon,
        "disclosure": found.disclosure,
        "method": found.method,
        "status": "met" if found.satisfied else "not_met",
        "unseen_rule": "suppress: a tuple of observed values never seen at fit time is "
        "released as '*' in every observed column",
        "input": {
            "sha256": result.stamp.get("input_sha256"),
            "name": result.stamp.get("input_name"),
        },
        "tuples": table[obs].to_numpy(dtype=object).tolist(),
        "released": table[[f"released:{c}" for c in obs]].to_numpy(dtype=object).tolist(),
    }


def save_mechanism(result: AuditResult, path: str | Path) -> Path:
    """Write the audit's fitted generalisation to ``path`` (JSON)."""
    p = Path(path)
    data = mechanism_dict(result)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(p)
    return p


def load_mechanism(path: str | Path) -> dict[str, Any]:
    """Read and check a mechanism file written by :func:`save_mechanism`."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError(
            f"MECHANISM must be a readable privwatch mechanism JSON file; got {str(p)!r} ({exc})."
        ) from None
    if not isinstance(data, dict) or data.get("format") != MECHANISM_FORMAT:
        raise ValidationError(
            f"MECHANISM must be a file written by privwatch audit --save-mechanism; got "
            f"{str(p)!r} (format {data.get('format') if isinstance(data, dict) else None!r})."
        )
    if data.get("version") != MECHANISM_VERSION:
        raise ValidationError(
            f"MECHANISM must have version {MECHANISM_VERSION}; got {data.get('version')!r}."
        )
    return data


@dataclass(frozen=True)
class AppliedRelease:
    """New records released through a saved mechanism."""

    released: pd.DataFrame
    unseen: np.ndarray
    input_rows: np.ndarray

    @property
    def n_unseen(self) -> int:
        """Records whose observed values were never seen at fit time (released as ``*``)."""
        return int(self.unseen.sum())


def apply_mechanism(mechanism: dict[str, Any], df: pd.DataFrame) -> AppliedRelease:
    """Release the records of ``df`` through a loaded mechanism (see the module docstring).

    A record with a missing observed value is treated as unseen (released as ``*``).

    Examples
    --------
    >>> mech = {"observed": ["age"], "bins": {}, "tuples": [["30"], ["40"]],
    ...         "released": [["30-40"], ["30-40"]]}
    >>> out = apply_mechanism(mech, pd.DataFrame({"age": [30, 40, 50]}))
    >>> out.released["age"].tolist(), out.n_unseen
    (['30-40', '30-40', '*'], 1)
    """
    obs = list(mechanism["observed"])
    absent = [c for c in obs if c not in df.columns]
    if absent:
        raise ValidationError(
            f"the new data must have the observed columns of the mechanism; missing {absent}."
        )
    frame = df[obs].reset_index(drop=True)
    bins = {c: v for c, v in (mechanism.get("bins") or {}).items() if c in obs}
    missing = frame.isna().any(axis=1).to_numpy()
    if bins:
        frame = bin_columns(frame.fillna({c: np.nan for c in bins}), bins)
    frame = frame.astype(object).where(frame.notna(), "\x00missing")
    table = pd.DataFrame(mechanism["tuples"], columns=obs, dtype=object).astype(str)
    rel = pd.DataFrame(mechanism["released"], columns=[f"released:{c}" for c in obs])
    released, unseen = map_through(pd.concat([table, rel], axis=1), frame, obs)
    unseen = unseen | missing
    for c in obs:
        released.loc[missing, c] = "*"
    return AppliedRelease(released, unseen, np.arange(len(df), dtype=np.int64))
