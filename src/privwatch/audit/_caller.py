"""Who asked for an audit: the one command that reproduces it, and the words its report uses.

Library messages name parameters in backticks (`max_suppressed`=0.2). The report is read by
whoever ran the audit, so it writes them in that caller's language: :func:`run` records a
Python caller (``max_suppressed=0.2``, and the ``privwatch.audit.run(...)`` call);
the command line replaces it with its own (its flags, written by ``cli/_flags.py``, the one
place that names them, and the full ``privwatch audit ...`` command line).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._spec import AuditSpec

__all__ = ["Caller"]

_NAMED = re.compile(
    r"`([A-Za-z_][A-Za-z0-9_]*)`=(?:'([^']*)'|\"([^\"]*)\"|([^\s,;:)]+?)(?=\.?(?:[\s,;:)]|$)))"
)


def _literal(value: Any) -> str:
    """``value`` as Python source (strings in double quotes, ``float("inf")``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


def _python_value(text: str, quoted: bool) -> str:
    if quoted:
        return _literal(text)
    try:
        float(text)
    except ValueError:
        return text if text in ("True", "False", "None") else _literal(text)
    return text


def python_words(message: str) -> str:
    """``message`` with each `name`=value written as the Python keyword `name=value`.

    >>> python_words("audit again with `disclosure`='positive' or `max_suppressed`=0.1.")
    'audit again with `disclosure="positive"` or `max_suppressed=0.1`.'
    """

    def keyword(match: re.Match[str]) -> str:
        name, *groups = match.groups()
        value = next(g for g in groups if g is not None)
        return f"`{name}={_python_value(value, groups[2] is None)}`"

    return _NAMED.sub(keyword, message)


def _source(source: Any) -> str:
    """A path as a string; the audit's own source types (:class:`~privwatch.audit.Bundled`,
    dataclasses, compared by name so that this module needs no route) by their fields; any
    other object (a frame, a connection) as ``df``."""
    if isinstance(source, str | Path):
        return _literal(source)
    if dataclasses.is_dataclass(source) and type(source).__module__.startswith("privwatch.audit"):
        values = ", ".join(_literal(getattr(source, f.name)) for f in dataclasses.fields(source))
        return f"privwatch.audit.{type(source).__name__}({values})"
    return "df"


@dataclass(frozen=True)
class Caller:
    """Who ran an audit, for its report.

    ``command`` is the one command that reproduces the audit in the caller's language;
    ``words`` writes a library message's backticked parameters as the caller writes them
    (:func:`python_words`, or the command line's flags); ``language`` is ``"python"`` or
    ``"command line"``.
    """

    command: str
    words: Callable[[str], str] = python_words
    language: str = "python"

    @classmethod
    def python(cls, spec: AuditSpec, source: Any, out: str | Path | None = None) -> Caller:
        """The ``privwatch.audit.run(...)`` call of ``spec`` on ``source``: the options that
        differ from their defaults, as keywords (``df`` stands for a data frame or another
        object that has no literal)."""
        parts = [f"source={_source(source)}"]
        for f in dataclasses.fields(AuditSpec):
            value = getattr(spec, f.name)
            default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
            if value == default:
                continue
            if f.name in ("sensitive", "observed"):
                value = ",".join(value)
            parts.append(f"{f.name}={_literal(value)}")
        if out is not None:
            parts.append(f"out={_literal(out)}")
        note = "" if _source(source) != "df" else "  # df: the table audited"
        return cls(f"privwatch.audit.run({', '.join(parts)}){note}")
