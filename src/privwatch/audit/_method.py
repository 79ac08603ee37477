"""The :class:`ReleaseMethod` interface: what an audit releases, and how it says so.

A route (:class:`~privwatch.audit.Route`) measures the records (counts or scores) and hands
its measurements (:class:`Measured`) to one release method, the one
:func:`~privwatch.audit.choose_method` picks from the spec in the registry
:data:`~privwatch.audit.METHODS`. The method

- **decides** the release (:meth:`ReleaseMethod.decide`: the measured table and the spec in,
  a :class:`Decision` out: the release, its flags, the guarantee, the searched release if any);
- writes **its section of leakage.json** (:meth:`ReleaseMethod.leakage`: every key of
  :data:`~privwatch.audit.LEAKAGE_KEYS`);
- gives **its mechanism** for ``save_mechanism`` and ``privwatch apply``
  (:meth:`ReleaseMethod.mechanism`), or refuses with the reason;
- gives **its rows of figures** (:meth:`ReleaseMethod.rows`: label and value, in words), which
  the printer and the report render without knowing which method made them.

The route labels the records with the decision and builds the one
:class:`~privwatch.audit.Audit`, which keeps the method (``Audit.release_method``). The
implementations are ``audit/_method_search.py``, ``_method_relaxed.py`` and
``_method_watchdog.py``; docs/architecture.md ("Adding a release method") shows how to add one.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..release import ReleaseResult
from ._spec import AuditSpec
from ._steps import ReleaseSearch

if TYPE_CHECKING:  # the watchdog's estimator loads scikit-learn
    from ..watchdog import Watchdog

__all__ = [
    "NO_MECHANISM",
    "AuditView",
    "Decision",
    "Measured",
    "ReleaseMethod",
    "SavedMechanism",
    "Step",
    "check_route",
]

#: A progress callback: called with a message at the start of each step of an audit.
Step = Callable[[str], None]

#: Why ``save_mechanism`` is refused for an audit whose method saves no mechanism.
NO_MECHANISM = (
    "`save_mechanism` needs an audit with a searched release of records in memory, or the "
    "plug-in watchdog or its (epsilon, delta) relaxation on records in memory (the plug-in "
    "route: `estimator`='plugin'); got an audit without one."
)


@dataclass
class Measured:
    """A route's measurements, as every release method reads them.

    ``sensitive`` is the sensitive column (``a+b`` for several scored jointly, whose columns
    ``sensitive_columns`` lists), ``epsilon`` the user's or the one proposed from the tradeoff
    curve (``epsilon_reason`` says which). Which other fields are set depends on the route:

    - ``joint``: the plug-in pmf ``p[s, x]`` of the records or the count table (None for a
      learned estimator);
    - ``search``: :func:`privwatch.release.find_release` with the audit's settings, over the
      records (memory) or the count table (engine);
    - ``released_joint(released)``: ``p[s, released cell]`` of a released table with one row per
      unit (a record, or a row of the count table);
    - ``records`` and ``probe``: the prepared records and the log-lift fitted once on them
      (memory);
    - ``weight``: the records each row of the count table stands for (engine; None: one each);
    - ``scorer`` and ``basis``: the cross-fitted models that score the records while they are
      labelled, and how they estimate the log-lift, in words (streamed).
    """

    route: str
    sensitive: str
    sensitive_columns: list[str]
    observed: list[str]
    epsilon: float
    epsilon_reason: str
    joint: np.ndarray | None = None
    search: ReleaseSearch | None = None
    released_joint: Callable[[pd.DataFrame], np.ndarray] | None = None
    records: pd.DataFrame | None = None
    probe: Watchdog | None = None
    weight: np.ndarray | None = None
    scorer: Any = None
    basis: str | None = None

    def share(self, flags: np.ndarray) -> float:
        """The share of the records whose unit is flagged (weighted on a count table)."""
        if self.weight is None:
            return float(flags.mean()) if flags.size else 0.0
        return float(self.weight[flags].sum() / self.weight.sum())

    def count(self, flags: np.ndarray) -> int:
        """How many records are flagged (weighted on a count table)."""
        if self.weight is None:
            return int(flags.sum())
        return int(self.weight[flags].sum())


@dataclass
class Decision:
    """What a release method decided, per unit of the measured table (a record in memory, a
    row of the count table in an engine).

    ``flags`` and ``risk`` per unit; ``release``: the released observed columns per unit;
    ``scores``: the per-record columns of scores.csv (``risk``, ``flagged`` and the method's
    own; memory); ``mapping``: each observed tuple's released tuple, joined by an engine to
    label the records; ``guarantee``: the ``guarantee`` of leakage.json; ``found``: the searched
    release when the method searched one; ``watchdog`` and ``log_lift``: the watchdog at
    epsilon on the records in memory; ``summary``: keys the method adds to ``Audit.summary``.
    On the streamed route the records are scored while they are labelled: the route flags
    those whose cross-fitted risk exceeds ``epsilon`` and leaves its counts in ``tally``
    (``counts`` and ``flagged`` per sensitive value, ``kept_risk`` the largest risk released
    unchanged, ``own_log_lift`` the sum of each record's log-lift of its own value) before it
    asks the method for its section of leakage.json. ``detail``: the method's own result, for
    its section of leakage.json (the plug-in watchdogs' :class:`~privwatch.release.merged.
    MergedRelease`).
    """

    method: str
    epsilon: float
    epsilon_reason: str
    flags: np.ndarray | None = None
    risk: np.ndarray | None = None
    release: pd.DataFrame | None = None
    scores: pd.DataFrame | None = None
    mapping: pd.DataFrame | None = None
    guarantee: dict[str, Any] | None = None
    found: ReleaseResult | None = None
    watchdog: Watchdog | None = None
    log_lift: np.ndarray | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    tally: Any = None
    detail: Any = None


class AuditView(Protocol):
    """What a release method reads of an :class:`~privwatch.audit.Audit` (for its rows and
    its mechanism)."""

    route: str
    epsilon: float
    settings: dict[str, Any]
    summary: dict[str, Any]
    leakage: dict[str, Any]
    stamp: dict[str, Any]
    details: dict[str, Any]
    found: ReleaseResult | None
    data: pd.DataFrame | None
    release: pd.DataFrame | None
    method_detail: Any


class SavedMechanism(Protocol):
    """What ``save_mechanism`` needs of a method's mechanism: it saves itself to a file that
    ``privwatch apply`` loads (:class:`privwatch.release.Generalisation` for the search)."""

    def save(self, path: str | Path) -> Path: ...


class ReleaseMethod(abc.ABC):
    """One way to release the audited records (see the module docstring).

    ``name`` is the key of the registry (:data:`~privwatch.audit.METHODS`), ``title`` the
    method in words, ``routes`` the routes it runs on.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    routes: ClassVar[tuple[str, ...]]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    @abc.abstractmethod
    def decide(self, spec: AuditSpec, measured: Measured, step: Step) -> Decision:
        """The release, its flags and its guarantee, from the measurements."""

    @abc.abstractmethod
    def leakage(self, spec: AuditSpec, measured: Measured, decision: Decision) -> dict[str, Any]:
        """The method's section of leakage.json: the keys of
        :data:`~privwatch.audit.LEAKAGE_KEYS` (:func:`~privwatch.audit.stable_leakage`)."""

    @abc.abstractmethod
    def rows(self, result: AuditView) -> list[tuple[str, str]]:
        """The figures of the release as (label, value) rows, in words, for the printer."""

    def report_rows(self, result: AuditView) -> list[tuple[str, str]]:
        """The rows the report shows (by default the printer's)."""
        return self.rows(result)

    def mechanism(self, result: AuditView) -> SavedMechanism:
        """The mechanism that releases new records as this audit released its own (for
        ``save_mechanism`` and ``privwatch apply``); raises ValidationError with the reason
        when the method has none to save."""
        raise ValidationError(NO_MECHANISM)

    def mechanism_refusal(self, spec: AuditSpec, route: str) -> str | None:
        """Why ``save_mechanism`` would be refused for an audit with ``spec`` on ``route``,
        asked before the audit runs, so that nothing is written for a request that must fail
        (None: :meth:`mechanism` is asked after the run). By default every route but the
        in-memory one is refused; a method that never saves overrides it."""
        if route == "memory":
            return None
        return (
            "`save_mechanism` needs the records in memory; it is not available when auditing "
            f"on the {route} route."
        )

    def attack(
        self, spec: AuditSpec, measured: Measured, decision: Decision, step: Step
    ) -> dict[str, Any] | None:
        """The ``attack`` section of leakage.json (records in memory, checks on), or None when
        the method cannot fit its release again on part of the records."""
        return None


def check_route(method: ReleaseMethod, route: str) -> None:
    """Refuse a method on a route it does not run on."""
    if route not in method.routes:
        raise ValidationError(
            f"the release method {method.name!r} ({method.title}) runs on the "
            f"{' and '.join(method.routes)} route(s); got the {route} route."
        )
