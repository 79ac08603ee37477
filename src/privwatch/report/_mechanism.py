"""Fit once, apply to new batches: the fitted generalisation as a JSON file (no pickle).

The file holds the binning of numeric columns (explicit cut points) and the table of every
observed value tuple seen at fit time with its released tuple (:func:`mapping_table`), in the
checked privwatch model format (schema and SHA-256 verified on load). Loading it runs no code.

**Rule for values never seen at fit time**: a record whose tuple of (binned) observed values
is not in the table is released as the suppressed cell, ``*`` in every observed column, and
counted in :attr:`AppliedRelease.n_unseen`. The guarantee of the audit is exact for the fitted
records only; for a new batch, the audit's held-out check is the estimate of what it is worth,
and re-auditing the batch (``privwatch audit``) measures it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._serialization import read_model, reconstructing, write_model
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
#: The ``kind`` of a saved generalisation in the checked model format.
MECHANISM_KIND = "Generalisation"
_STATE_KEYS = {
    "format", "version", "privwatch_version", "sensitive", "observed", "bins", "epsilon",
    "disclosure", "method", "status", "unseen_rule", "input", "tuples", "released",
}  # fmt: skip


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
    """Write the audit's fitted generalisation to ``path``: a checked privwatch model file
    (kind ``Generalisation``, SHA-256 of its content; :mod:`privwatch._serialization`)."""
    p = Path(path)
    state = mechanism_dict(result)
    tmp = p.with_name(p.name + ".tmp")
    write_model(tmp, MECHANISM_KIND, state, {})
    tmp.replace(p)
    return p


def _scalar_rows(rows: Any, width: int, name: str) -> list[list[Any]]:
    if not isinstance(rows, list) or not all(
        isinstance(r, list)
        and len(r) == width
        and all(isinstance(v, (str, int)) or (isinstance(v, float) and math.isfinite(v)) for v in r)
        for r in rows
    ):
        raise ValueError(f"{name} must be rows of {width} scalars")
    return rows


def _bins(bins: Any, observed: list[str]) -> dict[str, Any]:
    if not isinstance(bins, dict) or not set(bins) <= set(observed):
        raise ValueError("bins must map observed columns to bin specs")
    for spec in bins.values():
        count = isinstance(spec, int) and not isinstance(spec, bool) and 1 <= spec <= 10**6
        edges = isinstance(spec, list) and all(
            isinstance(e, (int, float)) and not isinstance(e, bool) and math.isfinite(e)
            for e in spec
        )
        if not (count or edges):
            raise ValueError(f"bins hold {str(spec)[:40]}")
    return bins


def load_mechanism(path: str | Path) -> dict[str, Any]:
    """Read and check a mechanism file written by :func:`save_mechanism`.

    The file's checksum and schema are verified before anything is built (observed columns,
    bins, the fitted tuples and their releases, epsilon); a tampered or truncated file raises
    :class:`~privwatch.exceptions.TamperedFileError`.
    """
    state, _ = read_model(path, MECHANISM_KIND)
    with reconstructing(path):
        if set(state) != _STATE_KEYS:
            raise KeyError(f"the state has keys {sorted(state)[:20]}")
        if state["format"] != MECHANISM_FORMAT or state["version"] != MECHANISM_VERSION:
            raise ValueError(f"format {state['format']!r} version {state['version']!r}")
        obs = state["observed"]
        if (
            not isinstance(obs, list)
            or not obs
            or not all(isinstance(c, str) for c in obs)
            or len(set(obs)) != len(obs)
        ):
            raise ValueError("observed must be distinct column names")
        _bins(state["bins"], obs)
        tuples = _scalar_rows(state["tuples"], len(obs), "tuples")
        released = _scalar_rows(state["released"], len(obs), "released")
        if len(tuples) != len(released) or not tuples:
            raise ValueError("tuples and released must be non-empty and of one length")
        eps = state["epsilon"]
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
            raise ValueError(f"epsilon {eps!r}")
        if state["disclosure"] not in ("both", "positive"):
            raise ValueError(f"disclosure {state['disclosure']!r}")
        if state["status"] not in ("met", "not_met"):
            raise ValueError(f"status {state['status']!r}")
    return state


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
