"""Release a new batch of records through a saved generalisation, into a folder.

The file-to-folder counterpart of :meth:`privwatch.release.Generalisation.apply` (what
``privwatch apply`` runs): load and check the saved generalisation, read the new records,
release them, write ``release.csv`` and ``apply.json`` (all or nothing).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._files import check_writable, file_sha256, staged_files
from ...engines import choose_engine, read_table
from ...exceptions import TamperedFileError, ValidationError
from ...watchdog import LEARNED_KIND, LearnedWatchdogMechanism
from ..randomized import RANDOMIZED_KIND, RandomizedMechanism
from ._applied_release import AppliedRelease
from ._apply_engine import ENGINE_APPLY_FILES, apply_in_engine
from ._mechanism import Generalisation

__all__ = ["APPLY_FILES", "AppliedBatch", "apply_saved_mechanism"]

#: The files :func:`apply_saved_mechanism` writes, in the order they are moved in.
APPLY_FILES = ("release.csv", "apply.json")


@dataclass(frozen=True)
class AppliedBatch:
    """A new batch released through a saved mechanism, and what was written.

    Attributes
    ----------
    applied : AppliedRelease or None
        The released records, which of them were unseen at fit time, their input rows (None
        when applied in an engine: the records stayed there, written to ``release.parquet``).
    summary : dict
        The content of ``apply.json``: the mechanism's and the input's names and SHA-256,
        ``n_records``, ``n_unseen``, the rule for unseen values, the fitted ``status`` and
        ``epsilon``.
    out : Path
        The folder everything was written to.
    files : list of Path
        Every file written (:data:`APPLY_FILES`, or ``release.parquet`` and ``apply.json``
        when applied in an engine).
    """

    applied: AppliedRelease | None
    summary: dict[str, Any]
    out: Path
    files: list[Path]


def apply_saved_mechanism(
    mechanism: str | Path,
    data: str | Path,
    out: str | Path,
    *,
    overwrite: bool = False,
    sep: str | None = None,
    encoding: str = "utf-8",
    seed: int | None = None,
    engine: str = "auto",
    table: str | None = None,
) -> AppliedBatch:
    """Release the records of the file ``data`` through the saved mechanism, into ``out``.

    The mechanism file (written by :meth:`Generalisation.save
    <privwatch.release.Generalisation.save>`, as an audit saves it) is checked before use
    (:meth:`~privwatch.release.Generalisation.load`); the records are read with
    :func:`privwatch.engines.read_table` and released by
    :meth:`~privwatch.release.Generalisation.apply`: a record whose tuple of (binned) observed
    values was seen at fit time gets its fitted release, any other record is suppressed (``*``
    in every observed column). Written into ``out``:

    - ``release.csv``: the released records, indexed by ``record`` (the input row, 0-based), with
      a column ``unseen``;
    - ``apply.json``: :attr:`AppliedBatch.summary`.

    Both are written to a staging folder inside ``out`` first and moved in only when both exist.

    **In an engine** (a generalisation only): when ``engine`` is "polars", "duckdb", "spark" or
    "sql", or "auto" picks one of them for ``data`` (a glob, a database URL with ``table``, a
    file above the engines' size threshold; :func:`privwatch.engines.choose_engine`), the
    records stay in the engine (:func:`._apply_engine.apply_in_engine`: the distinct tuples
    counted there, looked up here, the records joined and written there) and ``release.csv`` is
    ``release.parquet`` instead (``record``, the released columns, ``unseen``), as the audit's
    engine route writes it.

    Parameters
    ----------
    mechanism : str or Path
        The saved mechanism (JSON, checked privwatch model format).
    data : str or Path
        The new records: CSV (optionally compressed), Excel, Parquet or JSON Lines.
    out : str or Path
        Output folder, created if needed.
    overwrite : bool
        Allow a folder that already holds files (the outputs there are replaced).
    sep, encoding : str
        Passed to :func:`~privwatch.engines.read_table` (``sep=None`` sniffs it).
    seed : int, optional
        For a saved randomized release (kind ``RandomizedChannel``,
        :class:`privwatch.release.randomized.RandomizedMechanism`): the seed its symbols are
        drawn with (the same seed, the same release; None: fresh randomness). A generalisation
        is deterministic and ignores it.

    Returns
    -------
    AppliedBatch

    Raises
    ------
    ValidationError
        ``out`` is not writable (or not empty without ``overwrite``), ``data`` is not a readable
        table or lacks the mechanism's observed columns.
    TamperedFileError
        ``mechanism`` is not an intact mechanism file.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> d = Path(tempfile.mkdtemp())
    >>> g = Generalisation(["x"], [["p"], ["q"]], [["p"], ["*"]], sensitive="s",
    ...                    epsilon=1.0, method="global", status="met")
    >>> m = g.save(d / "m.json")
    >>> pd.DataFrame({"x": list("pqr")}).to_csv(d / "new.csv", index=False)
    >>> batch = apply_saved_mechanism(m, d / "new.csv", d / "out")
    >>> batch.summary["n_records"], batch.summary["n_unseen"], [p.name for p in batch.files]
    (3, 1, ['release.csv', 'apply.json'])
    """
    if not isinstance(overwrite, bool):
        raise ValidationError(f"`overwrite` must be True or False; got {overwrite!r}.")
    if not isinstance(mechanism, (str, os.PathLike)) or not isinstance(data, (str, os.PathLike)):
        raise ValidationError(
            f"`mechanism` and `data` must be file paths; got {type(mechanism).__name__} and "
            f"{type(data).__name__}."
        )
    target = Path(out)
    check_writable(target, overwrite)
    if saved_kind(mechanism) == RANDOMIZED_KIND:  # a randomized release: its channel, drawn
        return _apply_randomized(Path(mechanism), Path(data), target, sep, encoding, seed)
    if saved_kind(mechanism) == LEARNED_KIND:  # a learned watchdog: its scorer flags, merged
        return _apply_learned(Path(mechanism), Path(data), target, sep, encoding)
    try:
        mech = Generalisation.load(mechanism)
    except TamperedFileError as exc:  # the file reader names its `path`: here the mechanism
        raise TamperedFileError(str(exc).replace("`path`", "`mechanism`", 1)) from None
    if _in_engine(str(data), engine, table):
        return _apply_engine(Path(mechanism), str(data), target, mech, engine, table)
    frame = read_table(data, sep=sep, encoding=encoding)
    applied = mech.apply(frame)
    summary = _summary(Path(mechanism), Path(data), mech, applied)
    _write_batch(target, applied, summary)
    return AppliedBatch(applied, summary, target, [target / name for name in APPLY_FILES])


def _in_engine(data: str, engine: str, table: str | None) -> bool:
    """Whether ``data`` is released in an engine (see :func:`apply_saved_mechanism`)."""
    if engine == "pandas":
        return False
    if engine != "auto" or "://" in data or any(c in data for c in "*?["):
        return True
    return Path(data).is_file() and choose_engine(data, engine, table)[0] != "pandas"


def _apply_engine(
    mechanism: Path, data: str, target: Path, mech: Generalisation, engine: str, table: str | None
) -> AppliedBatch:
    """The generalisation applied in the engine, ``release.parquet`` and ``apply.json``
    written into ``target`` (both or neither)."""
    with staged_files(target, ENGINE_APPLY_FILES) as staging:
        counts = apply_in_engine(
            mech, data, staging / ENGINE_APPLY_FILES[0], engine=engine, table=table
        )
        single = "://" not in data and Path(data).is_file()
        summary = {
            "mechanism": mechanism.name,
            "mechanism_sha256": file_sha256(mechanism),
            "input_name": Path(data).name if single else data.split("@")[-1],
            "input_sha256": file_sha256(data) if single else None,
            **counts,
            "unseen_rule": mech.unseen_rule,
            "fitted_status": mech.status,
            "epsilon": mech.epsilon,
            "engine": choose_engine(data, engine, table)[0],
        }
        (staging / ENGINE_APPLY_FILES[1]).write_text(json.dumps(summary, indent=2), "utf-8")
    return AppliedBatch(None, summary, target, [target / name for name in ENGINE_APPLY_FILES])


def saved_kind(path: str | os.PathLike[str]) -> str | None:
    """The ``kind`` a saved model file says it holds (None when it cannot be read as one; the
    loader of that kind checks the whole file)."""
    try:
        doc = json.loads(Path(path).read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    kind = doc.get("kind") if isinstance(doc, dict) else None
    return kind if isinstance(kind, str) else None


def _apply_randomized(
    mechanism: Path, data: Path, target: Path, sep: str | None, encoding: str, seed: int | None
) -> AppliedBatch:
    """A saved randomized release applied to ``data``: each record's symbol drawn with
    ``seed`` (the same seed, the same release)."""
    try:
        mech = RandomizedMechanism.load(mechanism)
    except TamperedFileError as exc:
        raise TamperedFileError(str(exc).replace("`path`", "`mechanism`", 1)) from None
    frame = read_table(data, sep=sep, encoding=encoding)
    unseen = mech.encode(frame) < 0
    released = mech.apply(frame, seed)
    applied = AppliedRelease(released, unseen, np.arange(len(frame)))
    summary = {
        "mechanism": mechanism.name,
        "mechanism_sha256": file_sha256(mechanism),
        "input_name": data.name,
        "input_sha256": file_sha256(data),
        "n_records": len(frame),
        "n_unseen": int(unseen.sum()),
        "unseen_rule": "released as '*' in every observed column",
        "fitted_status": mech.status,
        "epsilon": mech.epsilon,
        "kind": RANDOMIZED_KIND,
        "seed": seed,
    }
    _write_batch(target, applied, summary)
    return AppliedBatch(applied, summary, target, [target / name for name in APPLY_FILES])


def _apply_learned(
    mechanism: Path, data: Path, target: Path, sep: str | None, encoding: str
) -> AppliedBatch:
    """A saved learned watchdog applied to ``data``: each record scored by the saved model,
    flagged records merged into the marker (every record is scored: none is unseen)."""
    try:
        mech = LearnedWatchdogMechanism.load(mechanism)
    except TamperedFileError as exc:
        raise TamperedFileError(str(exc).replace("`path`", "`mechanism`", 1)) from None
    frame = read_table(data, sep=sep, encoding=encoding)
    released, flags = mech.release(frame)
    applied = AppliedRelease(released, np.zeros(len(frame), dtype=bool), np.arange(len(frame)))
    summary = {
        "mechanism": mechanism.name,
        "mechanism_sha256": file_sha256(mechanism),
        "input_name": data.name,
        "input_sha256": file_sha256(data),
        "n_records": len(frame),
        "n_unseen": 0,
        "n_flagged": int(flags.sum()),
        "unseen_rule": "none: every record is scored by the saved log-lift model",
        "fitted_status": mech.status,
        "epsilon": mech.epsilon,
        "kind": LEARNED_KIND,
    }
    _write_batch(target, applied, summary)
    return AppliedBatch(applied, summary, target, [target / name for name in APPLY_FILES])


def _summary(
    mechanism: Path, data: Path, mech: Generalisation, applied: AppliedRelease
) -> dict[str, Any]:
    """The content of ``apply.json``."""
    return {
        "mechanism": mechanism.name,
        "mechanism_sha256": file_sha256(mechanism),
        "input_name": data.name,
        "input_sha256": file_sha256(data),
        "n_records": len(applied.input_rows),
        "n_unseen": applied.n_unseen,
        "unseen_rule": mech.unseen_rule,
        "fitted_status": mech.status,
        "epsilon": mech.epsilon,
    }


def _write_batch(target: Path, applied: AppliedRelease, summary: dict[str, Any]) -> None:
    """``release.csv`` and ``apply.json`` into ``target``, both or neither."""
    released = applied.released.assign(unseen=applied.unseen)
    released.index = applied.input_rows
    released.index.name = "record"
    with staged_files(target, APPLY_FILES) as staging:
        released.to_csv(staging / "release.csv")
        text = json.dumps(summary, indent=2)
        (staging / "apply.json").write_text(text, encoding="utf-8")
