"""The in-memory route: the records in pandas, every estimator, the full report.

measure: prepare the records, fit the log-lift estimator once, the tradeoff curve;
decide: epsilon (given or proposed), the watchdog threshold, and on the plug-in route without
``delta`` the most informative generalisation that meets epsilon-lift privacy
(:func:`privwatch.release.find_release`); label: every record's scores and release, the classic
measures and the inference attack. The named steps are in :mod:`privwatch.audit._steps`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from ..engines import read_table
from ..exceptions import ValidationError
from ..release import ReleaseResult
from ..watchdog import Watchdog
from ._disclosure import attack_section, classic_section, mapping_table
from ._leakage import leakage_of_search, leakage_of_watchdog
from ._prepare import prepare_rows, resolve_columns
from ._result import Audit
from ._route import Bundled, Route, Step
from ._spec import AuditSpec
from ._stamp import make_stamp
from ._steps import (
    ReleaseSearch,
    adopt_search,
    choose_epsilon,
    estimate_log_lift,
    joint_sensitive,
    resolve_estimator,
    search_release,
    spec_settings,
    tradeoff_curve,
    watchdog_release,
)

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
    epsilon: float
    reason: str
    watchdog: Watchdog
    log_lift: np.ndarray
    scores: pd.DataFrame
    flags: np.ndarray
    release: pd.DataFrame
    found: ReleaseResult | None
    leakage: dict[str, Any]
    search: ReleaseSearch


def _read(spec: AuditSpec, source: Any) -> tuple[AuditSpec, pd.DataFrame, Path | None]:
    """The records, and the spec completed with a bundled data set's defaults."""
    if isinstance(source, Bundled):
        if source.name not in BUNDLED:
            raise ValidationError(
                f"`dataset` must be one of {sorted(BUNDLED)}; got {source.name!r}."
            )
        load, sens, obs, preset = BUNDLED[source.name]
        observed = list(spec.observed or obs)
        bins = {**(preset if spec.estimator == "plugin" else {}), **spec.bins}
        spec = spec.replace(
            sensitive=spec.sensitive or (sens,),
            observed=tuple(observed),
            bins={c: v for c, v in bins.items() if c in observed},
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
            hierarchies=set(hierarchies), max_levels=max_levels,
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
        step("fitting the watchdog and releasing")
        wd, scores, score_frame, flags, release = watchdog_release(
            m.probe, m.frame, float(epsilon), spec.delta, spec.epsilon_max
        )
        search = ReleaseSearch(
            self._search_frame(m), list(m.components) if m.components else m.sensitive,
            m.cols, spec,
        )  # fmt: skip
        found = None
        if m.plugin and spec.delta is None:
            step("searching the most informative release")
            found, epsilon, reason = search_release(
                search, float(epsilon), reason, spec.epsilon is None
            )
            release, score_frame, flags = adopt_search(found, m.frame, m.cols, score_frame)
            leakage = leakage_of_search(wd, found, m.frame[m.sensitive], release)
        else:
            leakage = leakage_of_watchdog(
                wd, spec.delta, m.frame[m.sensitive], scores.log_lift, plugin=m.plugin
            )
        return _Decided(
            m, float(epsilon), reason, wd, scores.log_lift, score_frame, flags, release,
            found, leakage, search,
        )  # fmt: skip

    @staticmethod
    def _search_frame(m: _Measured) -> pd.DataFrame:
        if m.components is None:
            return m.frame
        rows = m.df[m.components].iloc[m.input_rows].reset_index(drop=True)
        return m.frame.join(rows)

    def label(
        self, spec: AuditSpec, source: Any, decided: _Decided, out: Path | None, step: Step
    ) -> Audit:
        d, m = decided, decided.measured
        sens_cols = list(m.components) if m.components else [m.sensitive]
        if m.spec.checks and m.plugin:
            self._checks(d, sens_cols, step)
        settings = spec_settings(m.spec, _sensitive(m), m.cols, d.epsilon, bins=m.spec.bins)
        return Audit(
            route=self.name,
            engine=self.engine,
            route_reason=self.reason,
            settings=settings,
            summary=_summary(m, d),
            epsilon=d.epsilon,
            epsilon_reason=d.reason,
            leakage=d.leakage,
            stamp=make_stamp(m.source_path, *m.shape),
            tradeoff=m.curve,
            risk=d.scores["risk"].to_numpy(),
            risk_weight=np.ones(len(d.scores)),
            found=d.found,
            watchdog=d.watchdog,
            scores=d.scores,
            release=d.release,
            log_lift=d.log_lift,
            data=m.frame,
            input_rows=m.input_rows,
            mechanism=None if d.found is None else mapping_table(m.frame, d.found.released, m.cols),
        )

    @staticmethod
    def _checks(d: _Decided, sens_cols: list[str], step: Step) -> None:
        m = d.measured
        step("computing the classic disclosure measures")
        source = d.search.source
        d.leakage["classic"] = classic_section(source, d.release, sens_cols, m.cols)
        if d.found is None:
            return
        step("attacking the release (inference with a control set)")
        eps = d.epsilon
        d.leakage["attack"] = attack_section(
            source, d.found, sens_cols, m.cols,
            lambda part: d.search(eps, final=False, data=part), rng=m.spec.seed,
        )  # fmt: skip


def _summary(m: _Measured, d: _Decided) -> dict[str, Any]:
    summary: dict[str, Any] = dict(m.counts)
    summary.update(
        n_records=len(m.frame),
        sensitive=_sensitive(m),
        sensitive_counts={str(k): int(v) for k, v in m.frame[m.sensitive].value_counts().items()},
        observed=m.cols,
        n_flagged=int(d.flags.sum()),
    )
    if m.plugin:
        summary["n_observed_symbols"] = int(d.watchdog.joint_.p.shape[1])
    if d.found is not None:
        summary["n_suppressed"] = d.found.suppressed_records
    return summary


def _sensitive(m: _Measured) -> str | list[str]:
    """The sensitive column, or the list of them when several are scored jointly."""
    return list(m.components) if m.components else m.sensitive
