"""Turning a table into a publishable one (docs/architecture.md, layer 5).

Generalisation hierarchies, the search for the most informative release that meets lift privacy
(one- or two-sided) within a suppression limit, held-out checks with intervals, and the attacks
that test a release.
"""

from __future__ import annotations

from ._api import ReleaseNotMetWarning, ReleaseResult, find_release
from ._attack import AttackResult, bayes_attack_success, inference_attack, wilson_interval
from ._cells import LiftBox
from ._classic import CLASSIC_THRESHOLDS, ClassicReport, classic_counts, classic_report
from ._generalisation import (
    MECHANISM_FORMAT,
    AppliedRelease,
    Generalisation,
    apply_mechanism,
    load_mechanism,
)
from ._heldout import HeldOut
from ._hierarchy import SUPPRESSED, Hierarchy, as_text, auto_hierarchy, parse_hierarchy_specs
from ._protection import explain_protection, per_value

__all__: list[str] = [
    "CLASSIC_THRESHOLDS",
    "MECHANISM_FORMAT",
    "SUPPRESSED",
    "AppliedRelease",
    "AttackResult",
    "ClassicReport",
    "Generalisation",
    "HeldOut",
    "Hierarchy",
    "LiftBox",
    "ReleaseNotMetWarning",
    "ReleaseResult",
    "apply_mechanism",
    "as_text",
    "auto_hierarchy",
    "bayes_attack_success",
    "classic_counts",
    "classic_report",
    "explain_protection",
    "find_release",
    "inference_attack",
    "load_mechanism",
    "parse_hierarchy_specs",
    "per_value",
    "wilson_interval",
]
