"""Which route an audit takes, and why: :func:`plan` (routes: :mod:`privwatch.audit._route`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .. import engines
from ..exceptions import ValidationError
from ._registry import method_for
from ._route import Bundled, Route
from ._route_engine import EngineRoute
from ._route_memory import MemoryRoute
from ._route_stream import STREAM_ESTIMATORS, StreamRoute
from ._spec import AuditSpec

__all__ = ["MEMORY_ONLY", "STREAM_ESTIMATORS", "plan"]
#: Options that need the records in memory, with the value that means "not used".
MEMORY_ONLY: dict[str, object] = {
    "delta": None,
    "estimator": "plugin",
    # re-identification risk from weights or households (issue #44); a sampling fraction or
    # a population table need only the counts, which the engine route folds (item 6)
    "weights": None,
    "cluster_id": None,
    # re-identification constraints, checked on the released records (issue #44 item 4)
    "max_reid_risk": None,
    "max_population_uniques": None,
}
#: Options of the re-identification risk (issue #44), with the value that means "not used":
#: the streamed route counts no quasi-identifier combinations, so it takes none of them.
REID_OPTIONS: dict[str, object] = {
    "sampling_fraction": None,
    "weights": None,
    "population": None,
    "cluster_id": None,
    "max_reid_risk": None,
    "max_population_uniques": None,
}


def plan(spec: AuditSpec, source: Any) -> Route:
    """The route an audit of ``source`` takes, with the reason (``route.reason``).

    ``source``: a pandas DataFrame or a bundled data set (in memory); a Polars, DuckDB or
    Spark frame (in its engine); a file, a glob of files or a database URL (in memory when one
    file is small enough for pandas, else in an engine; with a learned estimator, streamed).
    Options that need the records in memory are refused on the other routes.
    """
    if isinstance(source, Bundled):
        return MemoryRoute("pandas", f"bundled data set {source.name}")
    if isinstance(source, pd.DataFrame) and spec.write_table is None:
        return MemoryRoute("pandas", "a pandas DataFrame in memory")
    if source is None:
        raise ValidationError("`source` is required: a file, glob, database URL or frame.")
    engine, reason = engines.choose_engine(
        str(source) if isinstance(source, Path) else source, spec.engine, spec.table
    )
    path = str(source) if isinstance(source, str | Path) else None
    single_file = path is not None and "://" not in path and Path(path).is_file()
    if engine == "pandas" and single_file and spec.write_table is None:
        return MemoryRoute(engine, reason)
    memory = _needs_memory(spec)
    if spec.engine == "auto" and single_file and memory and _small(str(path)):
        # auto chose an engine for the rows alone; an option it cannot honour keeps pandas
        return MemoryRoute("pandas", f"{reason}, but {memory} needs the records in memory")
    if spec.estimator in STREAM_ESTIMATORS:
        return StreamRoute("stream", _stream_reason(spec, source, reason))
    if spec.estimator != "plugin":
        raise ValidationError(
            f"`estimator` {spec.estimator!r} needs the records in memory; on a source counted "
            f"in the {engine} engine ({reason}) use 'plugin', or one of "
            f"{sorted(STREAM_ESTIMATORS)} (streamed from Parquet files)."
        )
    for name, unused in MEMORY_ONLY.items():
        if getattr(spec, name) != unused:
            raise ValidationError(
                f"`{name}` needs the records in memory; it is not available when auditing in "
                f"the {engine} engine ({reason})."
            )
    return EngineRoute(engine, reason)


def _needs_memory(spec: AuditSpec) -> str | None:
    """The option (as ``name=value``) of ``spec`` that only the in-memory route honours, or
    None."""
    if spec.estimator != "plugin":
        return f"`estimator`={spec.estimator!r}"
    for name, unused in MEMORY_ONLY.items():
        if getattr(spec, name) != unused:
            return f"`{name}`"
    try:
        method = method_for(spec)
    except ValidationError:  # the route that runs refuses it, with its reason
        return None
    if "engine" not in method.routes:
        return f"`method`={method.name!r}"
    return None


def _small(path: str) -> bool:
    """A file pandas reads in memory by size (auto chose an engine for its rows)."""
    return Path(path).stat().st_size <= engines.AUTO_THRESHOLD_BYTES


def _stream_reason(spec: AuditSpec, source: Any, reason: str) -> str:
    """Check the options a streamed learned estimator can honour; the route's reason."""
    name = f"`estimator`={spec.estimator!r}"
    if not isinstance(source, str | Path) or "://" in str(source) or spec.table is not None:
        raise ValidationError(
            f"{name} trains on batches streamed from Parquet files and cannot read a database "
            "table or a frame; export it to Parquet, or use `estimator`='plugin' (counted in "
            "the engine)."
        )
    if spec.engine != "auto":
        raise ValidationError(
            f"{name} streams the Parquet files itself; leave `engine` at 'auto', or use "
            f"`estimator`='plugin' to count in {spec.engine}."
        )
    if spec.write_table is not None:
        raise ValidationError(
            f"`write_table` names new tables of a source database; with {name} the source is "
            "Parquet files and the release and scores go to `out` (release.parquet, "
            "scores.parquet)."
        )
    if spec.epsilon is None:
        raise ValidationError(
            f"`epsilon` is required with {name} on a source that does not fit in memory (the "
            "in-memory audit proposes one from every record's risk)."
        )
    if spec.folds < 2:
        raise ValidationError(f"{name} scores every record cross-fitted: `folds` must be >= 2.")
    unused: object
    for option, unused in (("bins", {}), ("delta", None)):
        if getattr(spec, option) != unused:
            raise ValidationError(
                f"`{option}` needs the records in memory; it is not available with {name} on "
                "a streamed source."
            )
    for option, unused in REID_OPTIONS.items():
        if getattr(spec, option) != unused:
            raise ValidationError(
                f"`{option}` (re-identification risk) needs the counts of the observed "
                f"columns' combinations; {name} on a streamed source counts none: use "
                "`estimator`='plugin' (counted in the engine) or the records in memory."
            )
    why = "a glob of files" if not Path(str(source)).is_file() else reason
    return f"{why}: {name} reads the Parquet files in batches"
