"""``AuditSpec``: every option of one audit, held once and validated once.

The command line, ``audit.toml`` and Python keywords all build the same frozen object; the
routes (:mod:`privwatch.audit._plan`) and the release search read it whole, so no option can be
dropped on the way down (see docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import engines
from .._validation import check_positive, check_positive_int, check_probability
from ..estimators import CANDIDATES
from ..exceptions import ValidationError
from ..preprocessing import DEFAULT_MAX_LEVELS, BinSpec, parse_bins
from ..release import Hierarchy, parse_hierarchy_specs
from ..release.cells import DISCLOSURES
from ..release.heldout import FOLDS, TOLERANCE
from ..release.search import MAX_NODES, MAX_SUPPRESSED, MIN_CLASS_SIZE, SUPPRESSIONS
from ._prepare import MISSING_POLICIES

__all__ = [
    "DISCLOSURES",
    "ENGINE_CHOICES",
    "ESTIMATORS",
    "METHOD_CHOICES",
    "AuditSpec",
    "read_config",
]

#: Names of the log-lift estimators an audit can use (``plugin``: exact counts).
ESTIMATORS = ("plugin", "classifier", "dv", "auto", *(c for c in CANDIDATES if c != "dv"))

#: The engines an audit can be asked for: ``auto`` (see :func:`privwatch.engines.choose_engine`)
#: and every engine :mod:`privwatch.engines` owns.
ENGINE_CHOICES = ("auto", *engines.ENGINES)

#: The release methods an audit can be asked for (``method``; None: the rule of
#: :func:`privwatch.audit.choose_method`): each of :data:`privwatch.audit.METHODS`, and
#: ``auto``, which audits every method that applies and keeps the most informative one met.
METHOD_CHOICES = ("search", "watchdog", "relaxed", "randomized", "auto")


def _names(value: str | Sequence[str] | None, name: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    if not items or not all(isinstance(c, str) and c.strip() for c in items):
        raise ValidationError(f"`{name}` must name at least one column; got {value!r}.")
    names = tuple(c.strip() for c in items)
    if len(set(names)) < len(names):
        raise ValidationError(f"`{name}` must name each column once; got {value!r}.")
    return names


@dataclass(frozen=True)
class AuditSpec:
    """Every option of one audit (the command line offers the same list as flags).

    Parameters
    ----------
    sensitive, observed
        The sensitive column(s) (several: scored as their joint tuple) and the observed
        columns (``None``: every other column). A comma-separated string is split.
    epsilon
        Threshold on :math:`|\\log \\ell(s, x)|` (nats); ``None`` proposes one.
    delta, epsilon_max
        The (epsilon, delta) relaxation of Sadeghi et al. and its cap.
    method
        The release method (``METHOD_CHOICES``): ``search``, ``watchdog``, ``relaxed``,
        ``randomized`` or ``auto`` (every method that applies, the most informative met one
        kept); None: the rule of :func:`privwatch.audit.choose_method` (``delta`` given:
        ``relaxed``; a learned estimator: ``watchdog``; else ``search``).
    estimator
        ``"plugin"`` (counts) or a learned log-lift estimator (``ESTIMATORS``).
    bins, hierarchies
        Explicit binning of numeric columns; ARX-style hierarchy files (or objects) by column.
    missing, force, max_levels
        Missing-value policy; allow identifier-like columns; the largest number of values of an
        unbinned numeric column (plug-in).
    disclosure, max_suppressed, folds, useful, local, held_out_tolerance, confidence, max_nodes
        The release search (:func:`privwatch.release.find_release`).
    min_class_size
        Every released cell but the suppressed one holds at least this many records
        (k-anonymity of the release; 1: no such demand).
    suppression
        ``"star"``: the cells the search suppresses are released as ``*``; ``"randomize"``:
        through an LP channel over them when that is met and keeps more I(X; Y) (records in
        memory; :mod:`privwatch.release.search._randomize`).
    checks
        Compute the classic measures and the inference attack.
    sampling_fraction, weights, population, cluster_id, risk_threshold
        Re-identification risk (docs/reidentification.md): the share of the population the
        records are, or the column of their design weights; a file of counts of the observed
        columns' combinations in the population (columns = the observed ones and ``count``);
        a household (cluster) id column; the highest acceptable risk of a record (0.09, El
        Emam 2013).
    max_reid_risk, max_population_uniques
        Re-identification constraints on the release (docs/reidentification.md): every
        released class has an expected population size of at least ``1 / max_reid_risk``
        under the chosen model; the release's estimated population uniques (Dankar's rule)
        are at most ``max_population_uniques``. Enforced by the search through its minimum
        class size and checked on the release; not met when they cannot hold.
    report_records
        List the riskiest records' observed values in the report (which is then marked as
        holding record-level data); by default the report holds no record's values.
    records
        Write every record labelled (``release.parquet``; in memory, ``scores.csv`` and
        ``release.csv``). ``False``: the verdict, the mapping, the report and the mechanism
        only, no per-record file (the engine route then makes no second pass over the data).
    engine, table, write_table
        Where the records are counted and labelled; a database table; ``write_table``: only
        when asked, the release and the scores go into the source database as two new tables
        ``<write_table>_release`` and ``<write_table>_scores`` (else to ``out`` as
        ``release.parquet`` and ``scores.parquet``).
    seed
        Random seed of every randomised step (folds, attack, estimators).
    estimator_params
        Keyword arguments of the learned estimator (e.g. ``epochs``) on the streamed route.
    sep, encoding
        How a CSV (or JSON Lines) file is read.
    """

    sensitive: tuple[str, ...] | None = None
    observed: tuple[str, ...] | None = None
    epsilon: float | None = None
    delta: float | None = None
    epsilon_max: float = math.inf
    method: str | None = None
    estimator: str = "plugin"
    bins: Mapping[str, BinSpec] = field(default_factory=dict)
    hierarchies: Mapping[str, str | Path | Hierarchy] = field(default_factory=dict)
    missing: str = "error"
    force: bool = False
    max_levels: int | None = DEFAULT_MAX_LEVELS
    disclosure: str = "both"
    max_suppressed: float = MAX_SUPPRESSED
    folds: int = FOLDS
    useful: str | None = None
    local: bool = True
    held_out_tolerance: float = TOLERANCE
    confidence: float | None = None
    max_nodes: int = MAX_NODES
    min_class_size: int = MIN_CLASS_SIZE
    suppression: str = "star"
    checks: bool = True
    sampling_fraction: float | None = None
    weights: str | None = None
    population: str | Path | None = None
    cluster_id: str | None = None
    risk_threshold: float = 0.09
    max_reid_risk: float | None = None
    max_population_uniques: float | None = None
    report_records: bool = False
    records: bool = True
    engine: str = "auto"
    table: str | None = None
    write_table: str | None = None
    seed: int = 0
    estimator_params: Mapping[str, Any] = field(default_factory=dict)
    sep: str = ","
    encoding: str = "utf-8"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "sensitive", _names(self.sensitive, "sensitive"))
        set_(self, "observed", _names(self.observed, "observed"))
        set_(self, "bins", dict(self.bins or {}))
        set_(self, "hierarchies", dict(self.hierarchies or {}))
        set_(self, "estimator_params", dict(self.estimator_params or {}))
        self._validate()

    def _validate(self) -> None:
        both = [c for c in self.observed or () if c in (self.sensitive or ())]
        if both:
            raise ValidationError(f"`observed` must not contain a sensitive column; got {both}.")
        if self.epsilon is not None:
            check_positive(self.epsilon, "epsilon")
        if self.delta is not None:
            check_probability(self.delta, "delta")
        if not (isinstance(self.epsilon_max, int | float) and self.epsilon_max > 0):
            raise ValidationError(f"`epsilon_max` must be positive; got {self.epsilon_max!r}.")
        if self.method is not None and self.method not in METHOD_CHOICES:
            raise ValidationError(
                f"`method` must be one of {list(METHOD_CHOICES)}; got {self.method!r}."
            )
        for name, allowed in (
            ("estimator", ESTIMATORS),
            ("missing", MISSING_POLICIES),
            ("disclosure", DISCLOSURES),
            ("engine", ENGINE_CHOICES),
            ("suppression", SUPPRESSIONS),
        ):
            if getattr(self, name) not in allowed:
                raise ValidationError(
                    f"`{name}` must be one of {list(allowed)}; got {getattr(self, name)!r}."
                )
        check_probability(self.max_suppressed, "max_suppressed")
        check_probability(self.held_out_tolerance, "held_out_tolerance")
        if self.confidence is not None and not 0 < self.confidence < 1:
            raise ValidationError(
                f"`confidence` must lie strictly between 0 and 1; got {self.confidence!r}."
            )
        if isinstance(self.folds, bool) or not isinstance(self.folds, int) or self.folds < 0:
            raise ValidationError(f"`folds` must be 0 or an integer >= 2; got {self.folds!r}.")
        if self.folds == 1:
            raise ValidationError("`folds` must be 0 (no held-out check) or >= 2; got 1.")
        check_positive_int(self.max_nodes, "max_nodes")
        check_positive_int(self.min_class_size, "min_class_size")
        if self.max_levels is not None:
            check_positive_int(self.max_levels, "max_levels")
        if not isinstance(self.records, bool):
            raise ValidationError(f"`records` must be True or False; got {self.records!r}.")
        if not self.records and self.write_table is not None:
            raise ValidationError(
                "`write_table` names where the labelled records go; with `records`=False none "
                "are written: leave one of them out."
            )
        if self.sampling_fraction is not None and not (
            isinstance(self.sampling_fraction, int | float) and 0 < self.sampling_fraction <= 1
        ):
            raise ValidationError(
                f"`sampling_fraction` must lie in (0, 1]; got {self.sampling_fraction!r}."
            )
        if self.sampling_fraction is not None and self.weights is not None:
            raise ValidationError(
                "`sampling_fraction` and `weights` both say how the records were sampled: "
                "give one of them."
            )
        check_probability(self.risk_threshold, "risk_threshold")
        if self.max_reid_risk is not None and not (
            isinstance(self.max_reid_risk, int | float) and 0 < self.max_reid_risk <= 1
        ):
            raise ValidationError(
                f"`max_reid_risk` must lie in (0, 1]; got {self.max_reid_risk!r}."
            )
        if self.max_population_uniques is not None and not (
            isinstance(self.max_population_uniques, int | float)
            and not isinstance(self.max_population_uniques, bool)
            and self.max_population_uniques >= 0
        ):
            raise ValidationError(
                "`max_population_uniques` must be a number >= 0; got "
                f"{self.max_population_uniques!r}."
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValidationError(f"`seed` must be a non-negative integer; got {self.seed!r}.")

    # -- construction from the other front ends ------------------------------------------
    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> AuditSpec:
        """Build from loosely typed options (the command line, a TOML table): ``bins`` and
        ``hierarchies`` may be lists of ``COL=...`` strings or tables, column lists may be
        comma-separated strings. Unknown keys are refused."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValidationError(
                f"unknown audit options {unknown}; known: {', '.join(sorted(known))}."
            )
        kw = dict(options)
        if "bins" in kw:
            kw["bins"] = _as_bins(kw["bins"])
        if "hierarchies" in kw:
            kw["hierarchies"] = _as_hierarchies(kw["hierarchies"])
        return cls(**{k: v for k, v in kw.items() if v is not None or k in _NULLABLE})

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> AuditSpec:
        """Read ``audit.toml`` (its ``[audit]`` table, or the top level); ``overrides`` win."""
        return cls.from_options({**read_config(path), **overrides})

    def replace(self, **changes: Any) -> AuditSpec:
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def sensitive_name(self) -> str:
        """The sensitive column, or the joint column's name (``a+b``) for several."""
        if not self.sensitive:
            raise ValidationError("`sensitive` is required: name the sensitive column.")
        return "+".join(self.sensitive)

    def search_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`privwatch.release.find_release` this spec fixes."""
        return {
            "disclosure": self.disclosure,
            "max_suppressed": self.max_suppressed,
            "hierarchies": dict(self.hierarchies) or None,
            "useful": self.useful,
            "local": self.local,
            "held_out_tolerance": self.held_out_tolerance,
            "confidence": self.confidence,
            "max_nodes": self.max_nodes,
            "min_class_size": self.min_class_size,
            "suppression": self.suppression,
        }


def read_config(path: str | Path) -> dict[str, Any]:
    """The options of an ``audit.toml`` file: its ``[audit]`` table, or the top level, with
    ``max-suppressed`` spelt ``max_suppressed``."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, TypeError) as exc:
        raise ValidationError(  # TypeError: not a path at all (None, a number)
            f"`config` must be a readable TOML file; got {str(path)!r} ({exc})."
        ) from None
    table = raw.get("audit", raw) if isinstance(raw.get("audit"), dict) else raw
    return {k.replace("-", "_"): v for k, v in table.items()}


_NULLABLE = {
    "epsilon", "delta", "method", "observed", "sensitive", "useful", "confidence", "table",
    "max_levels",
}  # fmt: skip


def _as_bins(value: Any) -> dict[str, BinSpec]:
    if isinstance(value, Mapping):
        return {
            str(k): v if isinstance(v, int) else [float(e) for e in v] for k, v in value.items()
        }
    return parse_bins([str(v) for v in (value or [])])


def _as_hierarchies(value: Any) -> dict[str, str | Path | Hierarchy]:
    if isinstance(value, Mapping):
        return dict(value)
    return dict(parse_hierarchy_specs([str(v) for v in (value or [])]))
