"""The audit of a table that lives in an engine: count there, decide here, label there.

The in-memory audit (:func:`privwatch.report.audit`) reads every record into pandas. This one
never does: the records stay in DuckDB, Polars, Spark, a database or a Parquet lake; only the
count table (one row per observed tuple, sensitive value and fold) comes to Python, where the
release search runs, and the scores and the release of every record are written back by the
engine (:func:`privwatch.release.release_source`).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import engines
from ..exceptions import ValidationError
from ..measures import log_lift
from ..release import Hierarchy, ReleaseResult, release_source
from ..watchdog import tradeoff
from ._audit import TARGET_LOSS
from ._source_neural import NeuralSourceAudit
from ._stamp import privwatch_version
from ._write import jsonable

__all__ = ["SourceAudit", "audit_source", "propose_epsilon", "write_source_audit"]

Step = Callable[[str], None]
#: The file the labelled records (scores and release) go to in the output folder.
RELEASE_FILE = "release.parquet"


@dataclass
class SourceAudit:
    """What :func:`audit_source` produced.

    ``release`` is the search's result on the count table (its ``mapping`` holds one row per
    observed tuple: the released values, risk, flag); ``engine`` and ``engine_reason`` say which
    engine counted and labelled the records and why; ``written`` names where the labelled
    records went (a file or a database table; None when nothing was written).
    """

    release: ReleaseResult
    engine: str
    engine_reason: str
    n_records: int
    n_tuples: int
    epsilon: float
    epsilon_reason: str
    missing: dict[str, int]
    source: str
    written: str | None = None
    warnings: list[dict[str, str]] = field(default_factory=list)

    @property
    def satisfied(self) -> bool:
        """Whether the release meets the requested guarantee."""
        return bool(self.release.satisfied)

    def to_dict(self) -> dict[str, Any]:
        """The content of ``leakage.json`` for an engine audit (JSON types only)."""
        doc: dict[str, Any] = {
            "route": "engine",
            "engine": self.engine,
            "engine_reason": self.engine_reason,
            "source": self.source,
            "n_records": self.n_records,
            "n_observed_tuples": self.n_tuples,
            "missing": self.missing,
            "epsilon": self.epsilon,
            "epsilon_reason": self.epsilon_reason,
            "written": self.written,
            "warnings": self.warnings,
            "privwatch_version": privwatch_version(),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        doc.update(self.release.to_dict())
        return dict(jsonable(doc))


def public_source(source: Any) -> str:
    """The source as it may be printed: a URL without its password, a path as given."""
    text = str(source) if isinstance(source, str | os.PathLike) else type(source).__name__
    if "://" not in text:
        return text
    scheme, rest = text.split("://", 1)
    netloc, sep, path = rest.partition("/")
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}:***@{host}" if ":" in user else f"{user}@{host}"
    return f"{scheme}://{netloc}{sep}{path}"


def propose_epsilon(joint: np.ndarray) -> tuple[float, str]:
    r"""The smallest epsilon on the watchdog tradeoff curve of ``joint[s, x]`` whose release
    loses at most :data:`~privwatch.report._audit.TARGET_LOSS` of the information in the observed
    columns (NMIL, Sadeghi et al. eq. 9) — the in-memory audit's rule, on the count table.

    The grid runs from 0.02 to 1.05 times the 0.999 quantile of the record risk
    :math:`\max_s |i(s, x)|` (40 points), as in :func:`privwatch.report.run_audit`.

    Examples
    --------
    >>> eps, why = propose_epsilon(np.array([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]]))
    >>> round(eps, 4)
    0.7097
    """
    p = np.asarray(joint, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = np.abs(log_lift(p))
    ll = np.where(p > 0, ll, 0.0)
    risk = ll.max(axis=0)
    weight = p.sum(axis=0)
    order = np.argsort(risk)
    cum = np.cumsum(weight[order])
    top = float(risk[order][min(np.searchsorted(cum, 0.999 * cum[-1]), len(order) - 1)])
    grid = np.unique(np.round(np.linspace(0.02, max(top, 0.1) * 1.05, 40), 4))
    curve = tradeoff(p, grid).to_frame()
    ok = curve[curve["nmil"] <= TARGET_LOSS]
    if len(ok):
        return float(ok.iloc[0]["threshold"]), (
            "smallest epsilon on the tradeoff curve whose release keeps at least "
            f"{1 - TARGET_LOSS:.0%} of the information in the observed columns"
        )
    return float(curve.iloc[-1]["threshold"]), (
        f"largest epsilon on the grid, since none loses at most {TARGET_LOSS:.0%}"
    )


def _joint_of(counts: pd.DataFrame, sensitive: list[str], observed: list[str]) -> np.ndarray:
    """``p[s, x]`` of a count table (folds summed); tuples and values in first-seen order."""
    s_code = pd.MultiIndex.from_frame(counts[sensitive].astype(str)).factorize()[0]
    x_code = pd.MultiIndex.from_frame(counts[observed].astype(str)).factorize()[0]
    p = np.zeros((s_code.max() + 1, x_code.max() + 1))
    np.add.at(p, (s_code, x_code), counts["count"].to_numpy(dtype=np.float64))
    return np.asarray(p / p.sum(), dtype=np.float64)


def _check_missing(counts: pd.DataFrame, missing: str, keys: list[str]) -> pd.DataFrame:
    holes = {k: v for k, v in counts.attrs["missing"].items() if v}
    if not holes:
        return counts
    if missing == "drop":
        return counts.dropna(subset=keys).reset_index(drop=True)
    raise ValidationError(
        f"`missing` is 'error' and the source has records with missing values: {holes} "
        "(records per column); pass missing='drop' (--missing drop) to leave them out."
    )


def audit_source(
    source: Any,
    sensitive: str | Sequence[str],
    observed: Sequence[str],
    *,
    epsilon: float | None = None,
    engine: str = "auto",
    table: str | None = None,
    out: str | Path | None = None,
    write_table: str | None = None,
    missing: str = "error",
    folds: int = 5,
    rng: int = 0,
    step: Step | None = None,
    hierarchies: Mapping[str, str | Path | Hierarchy] | None = None,
    **options: Any,
) -> SourceAudit:
    """Audit a table where it lives: count in the engine, search here, label in the engine.

    One group-by in the engine (:func:`privwatch.engines.count_table`, held-out folds from row
    positions), epsilon proposed from the count table when not given (:func:`propose_epsilon`),
    the release search on the count table and one join in the engine
    (:func:`privwatch.engines.label_records`) that writes every record with its row position
    (``privwatch_row``), released values, risk and flags to ``out`` (``.parquet``/``.csv``,
    streamed by the engine in its scan order) or to the new database table ``write_table``.
    ``options`` are the keyword arguments of :func:`privwatch.release.find_release`
    (``disclosure``, ``max_suppressed``, ``useful``, ``local``, ``held_out_tolerance``,
    ``confidence``). Records with a missing key value are an error unless ``missing="drop"``
    (they are then left out of the counts; their labelled rows carry no release).

    Examples
    --------
    >>> df = pd.DataFrame({"s": list("ab") * 50, "x": list("pq") * 25 + list("qp") * 25})
    >>> res = audit_source(df, "s", ["x"], epsilon=0.5, folds=0)
    >>> res.engine, res.n_records, res.satisfied
    ('pandas', 100, True)
    """
    if missing not in ("error", "drop"):
        raise ValidationError(
            f"`missing` must be 'error' or 'drop' for an engine source; got {missing!r}."
        )
    say = step or (lambda _msg: None)
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    obs = list(observed)
    useful = options.get("useful")
    keys = obs + ([useful] if useful and useful not in obs else [])
    say("counting in the engine")
    counts = engines.count_table(
        source, sens, keys, engine=engine, folds=folds if folds >= 2 else None, seed=rng,
        table=table,
    )  # fmt: skip
    counts = _check_missing(counts, missing, [*sens, *keys])
    n_records = int(counts["count"].sum())
    if n_records == 0:
        raise ValidationError("`source` must hold at least one record with no missing key value.")
    reason = "given by the user"
    if epsilon is None:
        say("proposing epsilon")
        epsilon, reason = propose_epsilon(_joint_of(counts, sens, obs))
    say("searching the most informative release")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = release_source(
            source, sens, obs, epsilon=float(epsilon), table=table, folds=folds, rng=rng,
            counts=counts, hierarchies=hierarchies, **options,
        )  # fmt: skip
    if out is not None or write_table is not None:
        say("labelling every record in the engine")
        engines.label_records(
            source, result.mapping, obs, out=out, engine=str(counts.attrs["engine"]),
            table=table, write_table=write_table,
        )  # fmt: skip
    written = None if out is None and write_table is None else str(out or f"table {write_table}")
    seen = {(w.category.__name__, str(w.message)) for w in caught}
    return SourceAudit(
        release=result,
        engine=str(counts.attrs["engine"]),
        engine_reason=str(counts.attrs["reason"]),
        n_records=n_records,
        n_tuples=len(counts[obs].drop_duplicates()),
        epsilon=float(epsilon),
        epsilon_reason=reason,
        missing={k: int(v) for k, v in counts.attrs["missing"].items()},
        source=public_source(source),
        written=written,
        warnings=[{"category": c, "message": m} for c, m in sorted(seen)],
    )


def write_source_audit(result: SourceAudit | NeuralSourceAudit, folder: str | Path) -> Path:
    """Write ``leakage.json`` of an engine (or streamed neural) audit into ``folder``; returns
    its path."""
    path = Path(folder) / "leakage.json"
    tmp = path.with_name(".privwatch-staging-leakage.json")
    tmp.write_text(json.dumps(result.to_dict(), indent=2, allow_nan=False), encoding="utf-8")
    os.replace(tmp, path)
    return path
