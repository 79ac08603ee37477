"""The :class:`Route` interface: measure (count or score), decide, label.

Three routes implement it (:func:`privwatch.audit.plan` picks one):

- ``memory``: the records are read into pandas; every estimator, the full report;
- ``engine``: the records stay in DuckDB, Polars, Spark or a database; only the count table
  (one row per observed tuple, sensitive value and fold) comes to Python;
- ``stream``: a learned log-lift estimator trains on Parquet batches it streams itself.

What a route releases is not its own choice: its ``decide`` hands the measurements
(:class:`~privwatch.audit.Measured`) to the release method
:func:`~privwatch.audit.method_for` picks from the spec (:data:`~privwatch.audit.METHODS`),
and labels the records with the method's :class:`~privwatch.audit.Decision`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ._method import Step
from ._spec import AuditSpec

if TYPE_CHECKING:
    from ._result import Audit

__all__ = ["RECORD_KEY", "RELEASE_FILE", "SCORES_FILE", "Bundled", "Route", "Step"]

#: The two record files the engine and streamed routes write (the in-memory route's release.csv
#: and scores.csv, as Parquet): the publishable release (the record key and the released
#: observed columns only) and the scores; never one file holding both.
RELEASE_FILE = "release.parquet"
SCORES_FILE = "scores.parquet"
#: The record key of both files: the record's 0-based row position in the source (as
#: release.csv's ``record`` is its input row number).
RECORD_KEY = "record"


@dataclass(frozen=True)
class Bundled:
    """A data set shipped with privwatch, by name (``Bundled("compas")``)."""

    name: str


class Route(abc.ABC):
    """One way to run an audit: :meth:`measure` (count or score the records), :meth:`decide`
    (epsilon, then the release method's decision: the release and its verdict) and
    :meth:`label` (every record's release, and the one :class:`~privwatch.audit.Audit`);
    :meth:`run` calls them in order. ``engine`` and ``reason`` say which engine does the work
    and why."""

    name: ClassVar[str]
    #: Steps :meth:`run` reports through its ``step`` callback (for a progress bar's length).
    steps: ClassVar[int]

    def __init__(self, engine: str, reason: str) -> None:
        self.engine = engine
        self.reason = reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}(engine={self.engine!r}, reason={self.reason!r})"

    @abc.abstractmethod
    def measure(self, spec: AuditSpec, source: Any, step: Step) -> Any:
        """Count (plug-in) or score (learned) the records; returns the route's measurements."""

    @abc.abstractmethod
    def decide(self, spec: AuditSpec, measured: Any, step: Step) -> Any:
        """Epsilon (given or proposed), then the release and its verdict: the
        :class:`~privwatch.audit.Decision` of the release method
        :func:`~privwatch.audit.method_for` picks, from the measurements."""

    @abc.abstractmethod
    def label(
        self, spec: AuditSpec, source: Any, decided: Any, out: Path | None, step: Step
    ) -> Audit:
        """Every record's release (in memory, or written by the engine to ``out``)."""

    def run(self, spec: AuditSpec, source: Any, out: Path | None, step: Step) -> Audit:
        """measure, decide, label."""
        measured = self.measure(spec, source, step)
        decided = self.decide(spec, measured, step)
        return self.label(spec, source, decided, out, step)
