"""Turning a table into a publishable one (DESIGN.md layer 5).

Generalisation hierarchies, the search for the most informative release that meets lift privacy
(one- or two-sided) within a suppression limit, held-out checks with intervals, and the attacks
that test a release.
"""

from __future__ import annotations

from ._api import ReleaseNotMetWarning, ReleaseResult, find_release
from ._cells import LiftBox
from ._heldout import HeldOut
from ._hierarchy import SUPPRESSED, Hierarchy, auto_hierarchy, parse_hierarchy_specs

__all__: list[str] = [
    "SUPPRESSED",
    "HeldOut",
    "Hierarchy",
    "LiftBox",
    "ReleaseNotMetWarning",
    "ReleaseResult",
    "auto_hierarchy",
    "find_release",
    "parse_hierarchy_specs",
]
