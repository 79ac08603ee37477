"""``Audit``: the one result of an audit, whichever route produced it.

Every route (in memory, in an engine, streamed through a learned estimator) returns an
:class:`Audit`; :meth:`Audit.to_dict` is the content of ``leakage.json`` and validates against
the one schema :data:`privwatch.report.SCHEMA`. Fields that only the in-memory route can fill
(the records, the fitted watchdog) are ``None`` elsewhere; the verdict, the guarantee and the
figures are the same keys on every route (:data:`LEAKAGE_KEYS`). ``release_method`` is the
release method that decided (:class:`~privwatch.audit.ReleaseMethod`): it gives the rows of
figures the printer and the report show (:meth:`Audit.rows`) and the mechanism
``save_mechanism`` saves (:meth:`Audit.mechanism`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..release import ReleaseResult
from ._caller import Caller
from ._json import jsonable
from ._leakage import LEAKAGE_KEYS
from ._method import NO_MECHANISM, ReleaseMethod, SavedMechanism

if TYPE_CHECKING:  # the watchdog's estimator loads scikit-learn
    from ..watchdog import Watchdog

__all__ = ["ROUTES", "Audit"]

#: The routes an audit can take (:func:`privwatch.audit.plan`).
ROUTES = ("memory", "engine", "stream")


@dataclass
class Audit:
    """Everything one audit produced (:func:`privwatch.audit.run`).

    ``route`` is ``"memory"`` (the records read into pandas), ``"engine"`` (counted and labelled
    in DuckDB, Polars, Spark or a database; only the count table in Python) or ``"stream"``
    (a learned log-lift estimator trained on Parquet batches); ``engine`` and ``route_reason``
    say which engine did the work and why. ``leakage`` has exactly the keys of
    :data:`LEAKAGE_KEYS` on every route, ``None`` where a value does not apply.
    ``risk`` and ``risk_weight`` are the record risks :math:`\\max_s |i(s, x)|` and how many
    records carry each (one per record in memory; one per observed tuple in an engine), for the
    risk figure. ``written`` names where the record files went when the route wrote them itself
    (release.parquet and scores.parquet, or the database tables ``<name>_release`` and
    ``<name>_scores`` as ``table <name>_release``).
    """

    route: str
    engine: str
    route_reason: str
    settings: dict[str, Any]
    summary: dict[str, Any]
    epsilon: float
    epsilon_reason: str
    leakage: dict[str, Any]
    stamp: dict[str, Any]
    tradeoff: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    risk: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    risk_weight: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    warnings: list[dict[str, str]] = field(default_factory=list)
    found: ReleaseResult | None = None
    watchdog: Watchdog | None = field(repr=False, default=None)
    scores: pd.DataFrame | None = field(repr=False, default=None)
    release: pd.DataFrame | None = field(repr=False, default=None)
    log_lift: np.ndarray | None = field(repr=False, default=None)
    data: pd.DataFrame | None = field(repr=False, default=None)
    input_rows: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, np.int64))
    written: list[str] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    #: Who ran the audit (:class:`~privwatch.audit.Caller`, set by :func:`~privwatch.audit.run`
    #: and replaced by the command line): the report's words and the command reproducing it.
    caller: Caller | None = field(repr=False, default=None)
    #: The release method that decided (None: a release made elsewhere, judged by ``check``).
    release_method: ReleaseMethod | None = field(repr=False, default=None)
    #: The release method's own result (``Decision.detail``: the randomized release with its
    #: channel, the plug-in watchdogs' partition), for its mechanism; None when it has none.
    method_detail: Any = field(repr=False, default=None)

    @property
    def satisfied(self) -> bool:
        """Whether the requested guarantee was delivered (``leakage["status"] == "met"``)."""
        return bool(self.leakage["status"] == "met")

    @property
    def reasons(self) -> list[str]:
        """Why the guarantee was not delivered (empty when it was)."""
        return list(self.leakage["reasons"])

    @property
    def alternatives(self) -> list[Any]:
        """The nearest feasible settings the audit found (empty when met)."""
        return list(self.leakage["alternatives"])

    @property
    def flagged(self) -> np.ndarray:
        """Per record (in memory) whether its risk exceeds epsilon."""
        if self.scores is None:
            raise AttributeError("`flagged` is kept per record by the in-memory route only.")
        return self.scores["flagged"].to_numpy()

    @property
    def method(self) -> str | None:
        """The name of the release method that decided (``"search"``, ``"relaxed"``,
        ``"watchdog"``: :data:`~privwatch.audit.METHODS`), None for a release made elsewhere."""
        return None if self.release_method is None else self.release_method.name

    def rows(self) -> list[tuple[str, str]]:
        """The figures of the release as (label, value) rows, as the command line prints them
        (the release method's; none without one)."""
        return [] if self.release_method is None else self.release_method.rows(self)

    def report_rows(self) -> list[tuple[str, str]]:
        """The figures of the release as (label, value) rows, as the report shows them."""
        return [] if self.release_method is None else self.release_method.report_rows(self)

    def mechanism(self) -> SavedMechanism:
        """The release method's mechanism, to save (``save_mechanism``) and apply to new records
        (``privwatch apply``): the fitted :class:`privwatch.release.Generalisation` of the
        in-memory release search. Raises ValidationError with the reason for a method that has
        none (the watchdogs, whose log-lift is not kept) or a release not in memory."""
        if self.release_method is None:
            raise ValidationError(NO_MECHANISM)
        return self.release_method.mechanism(self)

    def generalisation(self) -> SavedMechanism:
        """:meth:`mechanism` by the search's name for it: the fitted
        :class:`privwatch.release.Generalisation` of an in-memory release search."""
        return self.mechanism()

    def to_dict(self) -> dict[str, Any]:
        """The content of ``leakage.json`` (JSON types; schema :data:`privwatch.report.SCHEMA`)."""
        payload = {
            "stamp": self.stamp,
            "route": self.route,
            "engine": self.engine,
            "route_reason": self.route_reason,
            "settings": self.settings,
            "summary": self.summary,
            "epsilon": self.epsilon,
            "epsilon_reason": self.epsilon_reason,
            **{k: self.leakage[k] for k in LEAKAGE_KEYS},
            "warnings": self.warnings,
            "tradeoff": self.tradeoff.to_dict(orient="list"),
            **({"written": self.written} if self.written is not None else {}),
            **self.details,
        }
        out: dict[str, Any] = jsonable(payload)
        return out
