"""Turning a table into a publishable one (DESIGN.md layer 5).

Generalisation hierarchies, the search for the most informative release that meets lift privacy
(one- or two-sided) within a suppression limit, held-out checks with intervals, and the attacks
that test a release.
"""

from __future__ import annotations

__all__: list[str] = []
