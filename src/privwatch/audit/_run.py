"""``run``: one audit of one source, whichever the route (see docs/architecture.md)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from ._caller import Caller
from ._plan import plan
from ._registry import check_method
from ._result import Audit
from ._route import Step
from ._spec import AuditSpec

__all__ = ["run"]


def run(
    spec: AuditSpec | None = None,
    source: Any = None,
    *,
    out: str | Path | None = None,
    progress: Step | None = None,
    **options: Any,
) -> Audit:
    """Audit ``source`` with the options of ``spec`` (or ``options``, the fields of
    :class:`AuditSpec`, when no ``spec`` is given).

    :func:`plan` picks the route (in memory, in an engine, streamed; ``Audit.route`` and
    ``Audit.route_reason`` say which and why). ``out``: the folder where the engine and
    streamed routes write the labelled records (``release.parquet``) as they go; the in-memory
    route keeps them in the result, and :func:`privwatch.report.write_audit` writes every
    output. ``progress(message)`` is called at the start of each step. Every warning raised
    during the run is kept, once, in ``Audit.warnings`` (and in ``leakage.json``) and raised
    again for the caller.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"s": list("ab") * 50, "x": list("pq") * 25 + list("qp") * 25})
    >>> result = run(source=df, sensitive="s", epsilon=0.5, folds=0, checks=False)
    >>> result.route, result.satisfied
    ('memory', True)
    """
    if spec is None:
        spec = AuditSpec.from_options(options)
    elif options:
        spec = spec.replace(**options)
    route = plan(spec, source)
    check_method(spec, route.name)  # a method that does not apply is refused before any work
    step = progress or (lambda _message: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = route.run(spec, source, None if out is None else Path(out), step)
    seen: set[tuple[str, str]] = set()
    for w in caught:
        key = (w.category.__name__, str(w.message))
        if key in seen:
            continue
        seen.add(key)
        result.warnings.append({"category": key[0], "message": key[1]})
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    result.leakage["warnings"] = list(result.warnings)
    result.caller = Caller.python(spec, source, out)
    return result
