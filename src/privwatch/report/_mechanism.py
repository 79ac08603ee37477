"""``save_mechanism``: an audit's fitted generalisation to a file, until the audit layer builds
the :class:`~privwatch.release.Generalisation` itself (``Generalisation.from_release``).

The saved generalisation lives in :mod:`privwatch.release` now; the other names here are
re-exported from there for earlier imports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..exceptions import ValidationError
from ..release import (
    MECHANISM_FORMAT,
    AppliedRelease,
    Generalisation,
    apply_mechanism,
    load_mechanism,
)

__all__ = [
    "MECHANISM_FORMAT",
    "AppliedRelease",
    "apply_mechanism",
    "load_mechanism",
    "save_mechanism",
]


def save_mechanism(result: Any, path: str | Path) -> Path:
    """Write the fitted generalisation of an audit result (``AuditResult``) to ``path``: a
    checked privwatch model file (kind ``Generalisation``; :meth:`Generalisation.save`)."""
    found, table = getattr(result, "found", None), getattr(result, "mechanism", None)
    if found is None or table is None:
        raise ValidationError(
            "`save_mechanism` needs an audit with a searched release (the plug-in route: "
            "`estimator='plugin'`, no `delta`); got an audit without one."
        )
    settings, stamp = result.settings, result.stamp
    mechanism = Generalisation.from_release(
        found,
        sensitive=settings["sensitive"],
        observed=settings["observed"],
        bins=settings.get("bins"),
        table=table,
        input_name=stamp.get("input_name"),
        input_sha256=stamp.get("input_sha256"),
    )
    return mechanism.save(path)
