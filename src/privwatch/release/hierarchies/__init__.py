"""Generalisation hierarchies: per observed column, levels from the original value up to ``*``.

Read from ARX-style files (:func:`parse_hierarchy_specs` names them per column), built from the
data (:func:`auto_hierarchy`; numeric columns in :func:`nested_intervals`), or passed as
:class:`Hierarchy` objects; :func:`build_hierarchies` gives every observed column of a request
its hierarchy. :class:`KeyCodes` factorises a table's key columns once for every reader.
"""

from ._distinct import KeyCodes
from ._hierarchy import (
    AUTO_INTERVALS,
    SUPPRESSED,
    Hierarchy,
    as_text,
    auto_hierarchy,
    build_hierarchies,
    nested_intervals,
    parse_hierarchy_specs,
)

__all__ = [
    "AUTO_INTERVALS",
    "SUPPRESSED",
    "Hierarchy",
    "KeyCodes",
    "as_text",
    "auto_hierarchy",
    "build_hierarchies",
    "nested_intervals",
    "parse_hierarchy_specs",
]
