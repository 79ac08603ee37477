"""What :func:`~privwatch.release.find_release` returns, and the warning of a release not met."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..heldout import HeldOut
from ..hierarchies import Hierarchy

__all__ = ["ReleaseNotMetWarning", "ReleaseResult"]


class ReleaseNotMetWarning(UserWarning):
    """The requested guarantee could not be delivered (see ``ReleaseResult.reasons``)."""


@dataclass
class ReleaseResult:
    """A release with its in-sample guarantee, held-out figures and the search's frontier.

    ``satisfied`` is False when one of ``reasons`` holds (:mod:`~privwatch.release.heldout`);
    ``alternatives`` then list the settings that were searched and checked the same way, each
    with its exact ``args`` and whether it is ``feasible``, strongest privacy first.
    ``confidence`` is the credible margin the release was found with (the user's, or raised
    until the held-out check passed); ``per_value`` what its guarantee promises about each
    sensitive value (:mod:`~privwatch.release.cells._protection`). ``released`` holds the
    released observed values of every record (input order), ``records`` each record's risk,
    flags and advice, ``mapping`` one row per observed tuple with its released values (what an
    engine joins to label records). :meth:`to_dict` is the release part of ``leakage.json``.
    """

    satisfied: bool
    reasons: list[str]
    alternatives: list[dict[str, Any]]
    epsilon: float
    disclosure: str
    max_suppressed: float
    method: str
    generalisation: dict[str, Any]
    information_nats: float
    information_global_nats: float
    information_local_nats: float | None
    information_input_nats: float
    suppressed_records: int
    perturbed_records: int
    n_records: int
    max_log_lift: float
    max_log_lift_by_attribute: dict[str, float]
    held_out: HeldOut | None
    confidence: float | None
    unique_records: int
    frontier: list[dict[str, Any]]
    nodes_evaluated: int
    search_complete: bool
    released: pd.DataFrame = field(repr=False)
    records: pd.DataFrame = field(repr=False)
    hierarchies: dict[str, Hierarchy] = field(repr=False, default_factory=dict)
    mapping: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    per_value: list[dict[str, Any]] = field(default_factory=list)
    held_out_verdict: str | None = None
    #: ``suppression="randomize"``: the channel that replaced the '*' (or why it did not);
    #: a :class:`~._randomize.SuppressionChannel`, None with the default ``"star"``.
    suppression: Any = field(repr=False, default=None)

    def to_dict(self) -> dict[str, Any]:
        """The ``release`` / ``guarantee`` / ``held_out`` / ``frontier`` parts of leakage.json."""
        return {
            "status": "met" if self.satisfied else "not_met",
            "reasons": list(self.reasons),
            "alternatives": list(self.alternatives),
            "release": {
                "method": self.method,
                "generalisation": self.generalisation,
                "entropy_nats": self.information_nats,
                "information_global_nats": self.information_global_nats,
                "information_local_nats": self.information_local_nats,
                "information_input_nats": self.information_input_nats,
                "suppressed_records": self.suppressed_records,
                "unique_records": self.unique_records,
                "perturbed_records": self.perturbed_records,
                "n_records": self.n_records,
                "nodes_evaluated": self.nodes_evaluated,
                "search_complete": self.search_complete,
                **({} if self.suppression is None else {"suppression": self.suppression.to_dict()}),
            },
            "guarantee": {
                "epsilon": self.epsilon,
                "disclosure": self.disclosure,
                "max_suppressed": self.max_suppressed,
                "max_log_lift_in_sample": self.max_log_lift,
                "max_log_lift_by_attribute": self.max_log_lift_by_attribute,
                "confidence": self.confidence,
                "per_value": list(self.per_value),
                "scope": "exact for the fitted (in-sample) distribution; see held_out",
            },
            "held_out": None
            if self.held_out is None
            else {
                **_not_computed_as_none(self.held_out.to_dict()),
                "verdict": self.held_out_verdict,
            },
            "frontier": self.frontier,
        }


def _not_computed_as_none(held: dict[str, Any]) -> dict[str, Any]:
    """The held-out figures with the plug-in ones not computed (NaN: the release was not
    cross-fitted) as None, so leakage.json says null rather than 'nan'."""
    plugin = ("breach_probability_plugin", "max_log_lift_plugin")
    return {k: None if k in plugin and v != v else v for k, v in held.items()}
