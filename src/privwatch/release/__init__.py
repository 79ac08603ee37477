"""Turning a table into a publishable one (docs/architecture.md, layer 5).

One sub-package per subject, each exporting its public names:

- :mod:`~privwatch.release.hierarchies`: generalisation hierarchies, from files or the data;
- :mod:`~privwatch.release.cells`: the count table of a release, the lift test of its cells
  (:class:`LiftBox`) and what the test promises each sensitive value;
- :mod:`~privwatch.release.heldout`: the held-out check (the model of p(s | x), the breach
  share's estimate and interval, :class:`HeldOut`) and the verdict rule with its constants;
- :mod:`~privwatch.release.search`: :func:`find_release`, the search for the most informative
  release that meets lift privacy (one- or two-sided) within a suppression limit, aimed at the
  held-out verdict, with its frontier and alternatives;
- :mod:`~privwatch.release.generalisation`: the saved mechanism (:class:`Generalisation`), its
  file format, and applying it to new records;

and, in this package, the attacks that test a release (``_attack.py``) and the classic
disclosure measures of a table (``_classic.py``).
"""

from __future__ import annotations

from ._attack import AttackResult, bayes_attack_success, inference_attack, wilson_interval
from ._classic import CLASSIC_THRESHOLDS, ClassicReport, classic_counts, classic_report
from .cells import LiftBox, explain_protection, per_value
from .generalisation import (
    MECHANISM_FORMAT,
    AppliedRelease,
    Generalisation,
    apply_mechanism,
    load_mechanism,
)
from .heldout import HeldOut
from .hierarchies import SUPPRESSED, Hierarchy, as_text, auto_hierarchy, parse_hierarchy_specs
from .search import ReleaseNotMetWarning, ReleaseResult, find_release

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
