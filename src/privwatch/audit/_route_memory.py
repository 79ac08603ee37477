"""The in-memory route: the records in pandas, every estimator, the full report.

measure: prepare the records, fit the log-lift estimator once, the tradeoff curve;
decide: epsilon (given or proposed from the curve), then the release method
:func:`~privwatch.audit.method_for` picks (the generalisation search, the (epsilon, delta)
watchdog or the record-level watchdog: :data:`privwatch.audit.METHODS`); label: every record's
scores and release, the classic measures and the method's attack. The named steps are in
:mod:`privwatch.audit._steps`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from ..engines import read_table
from ..exceptions import ValidationError
from ._disclosure import classic_section
from ._leakage import release_joint
from ._method import Decision, Measured, ReleaseMethod, check_route
from ._method_auto import with_other_methods
from ._prepare import prepare_rows, resolve_columns
from ._registry import METHODS, method_for
from ._reid_constraint import constraint_block, constraint_verdict, has_constraints
from ._reidentification import read_population, reid_section
from ._result import Audit
from ._route import Bundled, Route, Step
from ._spec import AuditSpec
from ._stamp import make_stamp
from ._steps import (
    ReleaseSearch,
    choose_epsilon,
    estimate_log_lift,
    joint_sensitive,
    resolve_estimator,
    spec_settings,
    tradeoff_curve,
)

if TYPE_CHECKING:  # the watchdog's estimator loads scikit-learn
    from ..watchdog import Watchdog

__all__ = ["BUNDLED", "MemoryRoute"]

#: Bundled data sets: loader, sensitive column, observed columns, plug-in binning preset.
BUNDLED: dict[str, tuple[Any, str, list[str], dict[str, Any]]] = {
    "compas": (load_compas, "race", list(COMPAS_OBSERVED), dict(COMPAS_BINS)),
}


@dataclass
class _Measured:
    spec: AuditSpec
    shape: tuple[int, int]
    source_path: Path | None
    df: pd.DataFrame
    frame: pd.DataFrame
    sensitive: str
    cols: list[str]
    components: list[str] | None
    counts: dict[str, int]
    input_rows: np.ndarray
    plugin: bool
    probe: Watchdog
    curve: pd.DataFrame


@dataclass
class _Decided:
    measured: _Measured
    table: Measured
    method: ReleaseMethod
    decision: Decision
    leakage: dict[str, Any]


def _read(spec: AuditSpec, source: Any) -> tuple[AuditSpec, pd.DataFrame, Path | None]:
    """The records, and the spec completed with a bundled data set's defaults."""
    if isinstance(source, Bundled):
        if source.name not in BUNDLED:
            raise ValidationError(
                f"`dataset` must be one of {sorted(BUNDLED)}; got {source.name!r}."
            )
        load, sens, obs, preset = BUNDLED[source.name]
        observed = list(spec.observed or obs)
        own = {c: v for c, v in preset.items() if c in observed}  # the user's bins are checked
        bins = {**(own if spec.estimator == "plugin" else {}), **spec.bins}
        spec = spec.replace(
            sensitive=spec.sensitive or (sens,), observed=tuple(observed), bins=bins
        )
        return spec, load(), None
    if isinstance(source, pd.DataFrame):
        return spec, source, None
    path = Path(str(source))
    return spec, read_table(path, sep=spec.sep, encoding=spec.encoding), path


class MemoryRoute(Route):
    """The records read into pandas (see the module docstring)."""

    name = "memory"
    steps = 9

    def measure(self, spec: AuditSpec, source: Any, step: Step) -> _Measured:
        spec, df, path = _read(spec, source)
        if not spec.sensitive:
            raise ValidationError("`sensitive` is required: name the sensitive column.")
        shape = df.shape
        sens = spec.sensitive[0] if len(spec.sensitive) == 1 else list(spec.sensitive)
        listed = None if spec.observed is None else list(spec.observed)
        design = [c for c in (spec.weights, spec.cluster_id) if c is not None]
        for c in design:
            if c not in df.columns:
                raise ValidationError(f"`{'weights' if c == spec.weights else 'cluster_id'}` "
                                      f"must name a column; got {c!r}.")  # fmt: skip
        if listed is None and design:  # design columns are not quasi-identifiers
            names = {*spec.sensitive, *design}
            listed = [c for c in df.columns if c not in names]
        df, sensitive, observed, components = joint_sensitive(df, sens, listed)
        est = resolve_estimator(spec.estimator, spec.seed)
        step("preparing the data")
        # plug-in: many-valued numeric columns without bins or hierarchy get nested intervals
        max_levels = spec.max_levels if est is None else None
        bins, hierarchies = resolve_columns(
            df, sensitive, observed, bins=spec.bins, hierarchies=spec.hierarchies,
            missing=spec.missing, max_levels=max_levels, force=spec.force,
        )  # fmt: skip
        frame, cols, counts, input_rows = prepare_rows(
            df, sensitive, observed, bins=bins, missing=spec.missing, force=spec.force,
            hierarchies=set(hierarchies), max_levels=max_levels, learned=est is not None,
        )  # fmt: skip
        spec = spec.replace(bins=bins, hierarchies=hierarchies)
        step("estimating the log-lift")
        # max_levels was checked by prepare_rows (columns with a hierarchy are exempt)
        probe, risk, grid = estimate_log_lift(frame, sensitive, cols, est, None, spec.seed)
        step("computing the tradeoff curve")
        curve = tradeoff_curve(probe, est is None, risk, frame[sensitive], grid)
        return _Measured(
            spec, shape, path, df, frame, sensitive, cols, components, dict(counts),
            input_rows, est is None, probe, curve,
        )  # fmt: skip

    def decide(self, spec: AuditSpec, measured: _Measured, step: Step) -> _Decided:
        m = measured
        spec = m.spec
        epsilon, reason = spec.epsilon, "given by the user"
        if epsilon is None:
            epsilon, reason = choose_epsilon(m.curve, m.plugin)
        labels = m.frame[m.sensitive]
        table = Measured(
            self.name, m.sensitive, list(m.components) if m.components else [m.sensitive],
            m.cols, float(epsilon), reason, joint=m.probe.joint_.p if m.plugin else None,
            search=ReleaseSearch(
                self._search_frame(m), list(m.components) if m.components else m.sensitive,
                m.cols, spec,
            ),
            released_joint=lambda released: release_joint(labels, released),
            records=m.frame, probe=m.probe,
        )  # fmt: skip
        if table.search is not None and has_constraints(spec):
            table.search.holds = lambda released: _release_holds(m, released)
        method = method_for(spec, self.name)
        check_route(method, self.name)
        decision = method.decide(spec, table, step)
        leakage = method.leakage(spec, table, decision)
        # not met: the other methods that apply, each audited, among the alternatives
        leakage = with_other_methods(METHODS, method, spec, table, leakage, step)
        decided = _Decided(m, table, method, decision, leakage)
        if has_constraints(spec):  # checked on the release in every case
            if decision.release is None:
                raise ValidationError(
                    f"the release method {method.name!r} releases no cells: "
                    "`max_reid_risk` and `max_population_uniques` need a released table."
                )
            section, _ = _reidentification(decided)
            near = None if table.search is None else table.search.nearest.get(decision.epsilon)
            constraint_verdict(
                section["constraint"], leakage, decision.found,
                None if near is None else (_constraint_of(m, near.released), near),
            )  # fmt: skip
            leakage["reidentification"] = section
        return decided

    @staticmethod
    def _search_frame(m: _Measured) -> pd.DataFrame:
        if m.components is None:
            return m.frame
        rows = m.df[m.components].iloc[m.input_rows].reset_index(drop=True)
        return m.frame.join(rows)

    def label(
        self, spec: AuditSpec, source: Any, decided: _Decided, out: Path | None, step: Step
    ) -> Audit:
        d, m, dec = decided, decided.measured, decided.decision
        assert dec.scores is not None and dec.release is not None and dec.risk is not None
        if m.spec.checks and m.plugin:
            self._checks(d, step)
        settings = spec_settings(m.spec, _sensitive(m), m.cols, dec.epsilon, bins=m.spec.bins)
        return Audit(
            route=self.name,
            engine=self.engine,
            route_reason=self.reason,
            settings=settings,
            summary=_summary(m, d),
            epsilon=dec.epsilon,
            epsilon_reason=dec.epsilon_reason,
            leakage=d.leakage,
            stamp=make_stamp(m.source_path, *m.shape),
            tradeoff=m.curve,
            risk=dec.risk,
            risk_weight=np.ones(len(dec.scores)),
            found=dec.found,
            watchdog=dec.watchdog,
            scores=dec.scores,
            release=dec.release,
            log_lift=dec.log_lift,
            data=m.frame,
            input_rows=m.input_rows,
            release_method=d.method,
            method_detail=dec.detail,
        )

    @staticmethod
    def _checks(d: _Decided, step: Step) -> None:
        """The classic measures of the release, and the method's attack on it."""
        m, table, dec = d.measured, d.table, d.decision
        assert table.search is not None and dec.release is not None and dec.scores is not None
        step("computing the classic disclosure measures")
        d.leakage["classic"] = classic_section(
            table.search.source, dec.release, table.sensitive_columns, m.cols
        )
        d.leakage["reidentification"], per_record = _reidentification(d)
        for column in per_record.columns:
            dec.scores[column] = per_record[column].to_numpy()
        attack = d.method.attack(m.spec, table, dec, step)
        if attack is not None:
            d.leakage["attack"] = attack


def _reidentification(d: _Decided) -> tuple[dict[str, Any], pd.DataFrame]:
    """Re-identification risk of the release and the input (``_reidentification.py``), with
    the constraints asked for (``_reid_constraint.py``)."""
    assert d.decision.release is not None
    section, per_record = _reid_of(d.measured, d.decision.release)
    section["constraint"] = constraint_block(d.measured.spec, section)
    return section, per_record


def _constraint_of(m: _Measured, released: pd.DataFrame) -> dict[str, Any]:
    """The re-identification constraints of a release of ``m``'s records."""
    section, _ = _reid_of(m, released)
    return constraint_block(m.spec, section) or {}


def _release_holds(m: _Measured, released: pd.DataFrame) -> bool:
    """Whether a release of ``m``'s records holds the re-identification constraints (the
    search's step, ``ReleaseSearch.holds``)."""
    block = _constraint_of(m, released)
    return all(part["holds"] for part in block.values() if isinstance(part, dict))


def _reid_of(m: _Measured, released: pd.DataFrame) -> tuple[dict[str, Any], pd.DataFrame]:
    spec = m.spec
    rows = m.df.iloc[m.input_rows]

    def column(name: str | None) -> np.ndarray | None:
        return None if name is None else rows[name].to_numpy()

    weights = column(spec.weights)
    if weights is not None:
        weights = pd.to_numeric(pd.Series(weights), errors="coerce").to_numpy(dtype=np.float64)
        if not (np.isfinite(weights).all() and (weights >= 1).all()):
            raise ValidationError("`weights` must name a column of design weights of at least 1.")
    population = None if spec.population is None else read_population(spec.population, m.cols)
    return reid_section(
        m.frame, released, m.cols, sampling_fraction=spec.sampling_fraction,
        weights=weights, population=population, cluster=column(spec.cluster_id),
        threshold=spec.risk_threshold, seed=spec.seed,
    )  # fmt: skip


def _summary(m: _Measured, d: _Decided) -> dict[str, Any]:
    dec = d.decision
    assert dec.flags is not None
    summary: dict[str, Any] = dict(m.counts)
    summary.update(
        n_records=len(m.frame),
        sensitive=_sensitive(m),
        sensitive_counts={str(k): int(v) for k, v in m.frame[m.sensitive].value_counts().items()},
        observed=m.cols,
        n_flagged=int(dec.flags.sum()),
    )
    if d.table.joint is not None:
        summary["n_observed_symbols"] = int(d.table.joint.shape[1])
    summary.update(dec.summary)
    return summary


def _sensitive(m: _Measured) -> str | list[str]:
    """The sensitive column, or the list of them when several are scored jointly."""
    return list(m.components) if m.components else m.sensitive
