"""``Audit``: the one result of an audit, whichever route produced it.

Every route (in memory, in an engine, streamed through a learned estimator) returns an
:class:`Audit`; :meth:`Audit.to_dict` is the content of ``leakage.json`` and validates against
the one schema :data:`privwatch.report.SCHEMA`. Fields that only the in-memory route can fill
(the records, the fitted watchdog) are ``None`` elsewhere; the verdict, the guarantee and the
figures are the same keys on every route (:data:`LEAKAGE_KEYS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..release import Generalisation, ReleaseResult
from ..watchdog import Watchdog
from ._caller import Caller
from ._json import jsonable
from ._leakage import LEAKAGE_KEYS

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
    risk figure. ``written`` names where the labelled records went when the route wrote them
    itself (a Parquet file or a database table).
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
    mechanism: pd.DataFrame | None = field(repr=False, default=None)
    written: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    #: Who ran the audit (:class:`~privwatch.audit.Caller`, set by :func:`~privwatch.audit.run`
    #: and replaced by the command line): the report's words and the command reproducing it.
    caller: Caller | None = field(repr=False, default=None)

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

    def generalisation(self) -> Generalisation:
        """The fitted generalisation as a mechanism to save and apply to new records
        (:class:`privwatch.release.Generalisation`; the in-memory release search only)."""
        if self.found is None or self.mechanism is None:
            raise ValidationError(
                "`save_mechanism` needs an audit with a searched release of records in memory "
                "(the plug-in route: `estimator`='plugin', no `delta`); got an audit without one."
            )
        sensitive = self.settings["sensitive"]  # a list when several are scored jointly
        return Generalisation.from_release(
            self.found,
            sensitive=sensitive if isinstance(sensitive, str) else "+".join(sensitive),
            observed=self.settings["observed"],
            bins=self.settings.get("bins"),
            table=self.mechanism,
            input_name=self.stamp.get("input_name"),
            input_sha256=self.stamp.get("input_sha256"),
        )

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
