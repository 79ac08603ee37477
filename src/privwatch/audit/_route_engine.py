"""The engine route: count there, decide here, label there.

The records stay in DuckDB, Polars, Spark, a database or a Parquet lake. measure: one group-by
in the engine (:func:`privwatch.engines.count_table`, held-out folds from row positions);
decide: epsilon proposed from the count table when not given (:func:`propose_epsilon`), then
the release method :func:`~privwatch.audit.method_for` picks, on the count table (the release
search, :func:`privwatch.release.find_release`: the one method that runs here); label: the
decision's mapping joined in the engine (:func:`privwatch.engines.label_records`) and written
by the engine as the in-memory route's two files: ``release.parquet`` (the record key and the
released observed columns, nothing else: publishable) and ``scores.parquet`` (the record key,
risk, flagged, suppressed, the released cell's log-lift and the advice) — or, asked for with
``write_table``, as the two tables ``<name>_release`` and ``<name>_scores`` of the database.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import engines
from ..exceptions import ValidationError
from ..measures import log_lift
from ..release.hierarchies import KeyCodes
from ..watchdog import tradeoff
from ._engine_bins import resolve_engine_bins
from ._engine_codes import (
    codes_with,
    distinct_tuples,
    raw_columns,
    released_codes,
    table_codes,
    table_joint,
    value_shares,
)
from ._engine_scores import DROPPED, lift_columns, value_labels, with_dropped
from ._method import Decision, Measured, ReleaseMethod, check_route
from ._registry import method_for
from ._reidentification import read_population, reid_section
from ._result import Audit
from ._route import RECORD_KEY, RELEASE_FILE, SCORES_FILE, Route, Step
from ._spec import AuditSpec
from ._stamp import make_stamp
from ._steps import TARGET_LOSS, ReleaseSearch, spec_settings

__all__ = ["EngineRoute", "propose_epsilon", "public_source", "record_columns"]


def record_columns(mapping: pd.DataFrame, observed: list[str]) -> tuple[dict[str, str], ...]:
    """``(release, scores)``: the columns of the two record files, each output name -> its
    source (the row position as :data:`RECORD_KEY`, or a column of the search's ``mapping``:
    ``release_<observed>`` for the release; its other ``release_*`` columns, the per-tuple
    scores, for the scores). No column of the source itself reaches either."""
    key = {RECORD_KEY: engines.ROW_COLUMN}
    released = {f"release_{c}" for c in observed}
    clash = [c for c in observed if f"release_{c}" not in mapping.columns]
    if clash:
        raise ValidationError(f"the release's mapping has no released value of {clash}.")
    release = {**key, **{c: f"release_{c}" for c in observed}}
    scores = {
        str(c).removeprefix("release_"): str(c)
        for c in mapping.columns
        if str(c).startswith("release_") and c not in released
    }
    return release, {**key, **scores}


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


def propose_epsilon(joint: np.ndarray) -> tuple[float, str, pd.DataFrame]:
    r"""The smallest epsilon on the watchdog tradeoff curve of ``joint[s, x]`` whose release
    loses at most :data:`~privwatch.audit.TARGET_LOSS` of the information in the observed
    columns (NMIL, Sadeghi et al. eq. 9) — the in-memory audit's rule, on the count table.

    The grid runs from 0.02 to 1.05 times the 0.999 quantile of the record risk
    :math:`\max_s |i(s, x)|` (40 points). Returns ``(epsilon, reason, curve)``.

    Examples
    --------
    >>> eps, why, curve = propose_epsilon(np.array([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]]))
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
        return (
            float(ok.iloc[0]["threshold"]),
            (
                "smallest epsilon on the tradeoff curve whose release keeps at least "
                f"{1 - TARGET_LOSS:.0%} of the information in the observed columns"
            ),
            curve,
        )
    return (
        float(curve.iloc[-1]["threshold"]),
        (f"largest epsilon on the grid, since none loses at most {TARGET_LOSS:.0%}"),
        curve,
    )


def _check_missing(counts: pd.DataFrame, missing: str, keys: list[str]) -> pd.DataFrame:
    holes = {k: v for k, v in counts.attrs["missing"].items() if v}
    if not holes:
        return counts
    if missing == "drop":
        return counts.dropna(subset=keys).reset_index(drop=True)
    raise ValidationError(
        f"`missing` is 'error' and the source has records with missing values: {holes} "
        "(records per column); pass `missing`='drop' to leave them out."
    )


@dataclass
class _Counted:
    counts: pd.DataFrame
    engine: str
    engine_reason: str
    sensitive: list[str]
    observed: list[str]
    #: the spec with the bins and hierarchies resolved (cut points, automatic intervals)
    spec: AuditSpec
    bins: dict[str, list[float]]
    #: the key columns of the count table's rows with a missing key (``missing`` drop)
    dropped: pd.DataFrame


@dataclass
class _Decided:
    counted: _Counted
    curve: pd.DataFrame
    method: ReleaseMethod
    decision: Decision
    leakage: dict[str, Any]
    #: the count table factorised once (``decide``): the labelling's lifts and the summary
    keys: KeyCodes | None = None


class EngineRoute(Route):
    """Count in the engine, decide on the count table (the release method), label in the
    engine."""

    name = "engine"
    steps = 5

    def measure(self, spec: AuditSpec, source: Any, step: Step) -> _Counted:
        if spec.missing not in ("error", "drop"):
            raise ValidationError(
                f"`missing` must be 'error' or 'drop' for an engine source; got {spec.missing!r}."
            )
        if not spec.sensitive:
            raise ValidationError("`sensitive` is required with a file, glob, URL or frame.")
        if spec.observed is None:
            raise ValidationError("`observed` is required when auditing in an engine.")
        if spec.write_table is not None and "://" not in str(source):
            raise ValidationError(
                "`write_table` names new tables of the source database (<name>_release and "
                f"<name>_scores); the source is not a database URL (got {spec.write_table!r}): "
                "the release and scores go to `out` (release.parquet, scores.parquet)."
            )
        sens, obs = list(spec.sensitive), list(spec.observed)
        keys = obs + ([spec.useful] if spec.useful and spec.useful not in obs else [])
        bins, hierarchies = resolve_engine_bins(spec, source, self.engine, sens, obs)
        spec = spec.replace(bins=bins, hierarchies=hierarchies)
        step("counting in the engine")
        counts = engines.count_table(
            source, sens, keys, engine=self.engine, folds=spec.folds if spec.folds >= 2 else None,
            seed=spec.seed, table=spec.table, bins=bins,
        )  # fmt: skip
        # the rows with a missing key, read only when they are dropped (``missing`` 'error'
        # refuses them): a pass over every object column of the count table; else no row,
        # taken before the columns (selecting the columns first copies every row of them)
        if spec.missing == "drop":
            holes = counts[[*sens, *keys]]
            holes = holes[holes.isna().any(axis=1)]
        else:
            holes = counts.iloc[:0][[*sens, *keys]]
        counts = _check_missing(counts, spec.missing, [*sens, *keys])
        if int(counts["count"].sum()) == 0:
            raise ValidationError(
                "`source` must hold at least one record with no missing key value."
            )
        engine, reason = str(counts.attrs["engine"]), str(counts.attrs["reason"])
        return _Counted(counts, engine, reason, sens, obs, spec, bins, holes)

    def decide(self, spec: AuditSpec, measured: _Counted, step: Step) -> _Decided:
        c = measured
        spec = c.spec
        # the count table factorised once: its joint, the search's count table and the
        # re-identification findings read the same codes (and the release's, its joint and
        # its re-identification findings)
        keys = KeyCodes(c.counts)
        released_keys: dict[int, tuple[pd.DataFrame, KeyCodes]] = {}
        decided: list[Decision] = []  # the decision, once made: its release's mapping
        apart = bool(spec.useful) and spec.useful not in c.observed  # a tuple row per useful

        def keys_of(released: pd.DataFrame) -> KeyCodes:
            hit = released_keys.get(id(released))
            if hit is None or hit[0] is not released:
                coded = KeyCodes(released.reset_index(drop=True))
                dec = decided[0] if decided else None
                if dec is not None and dec.release is released and dec.mapping is not None:
                    # the release's tuples read off its mapping (no pass over its text)
                    cells = None if apart else released_codes(
                        c.counts, keys, dec.mapping, coded, c.observed
                    )  # fmt: skip
                    if cells is not None:
                        coded.remember(c.observed, raw_columns(coded, c.observed), cells)
                hit = (released, coded)
                released_keys[id(released)] = hit
            return hit[1]

        s_code = table_codes(c.counts, c.sensitive, keys)
        joint = table_joint(c.counts, s_code, table_codes(c.counts, c.observed, keys))
        step("proposing epsilon")
        epsilon, reason, curve = propose_epsilon(joint)
        if spec.epsilon is not None:
            epsilon, reason = float(spec.epsilon), "given by the user"
        weight = c.counts["count"].to_numpy(dtype=np.float64)

        def released_joint(released: pd.DataFrame) -> np.ndarray:
            coded = keys_of(released)
            cells = table_codes(coded.frame, c.observed, coded)
            after = np.zeros((s_code.max() + 1, cells.max() + 1))
            np.add.at(after, (s_code, cells), weight)
            out: np.ndarray = after / after.sum()
            return out

        search = ReleaseSearch(c.counts, c.sensitive, c.observed, spec, counts_column="count")
        search.cache.keys = keys
        table = Measured(
            self.name, "+".join(c.sensitive), list(c.sensitive), c.observed, float(epsilon),
            reason, joint=joint, search=search, released_joint=released_joint, weight=weight,
        )  # fmt: skip
        method = method_for(spec)
        check_route(method, self.name)
        decision = method.decide(spec, table, step)
        decided.append(decision)
        leakage = method.leakage(spec, table, decision)
        if spec.checks and decision.release is not None:
            rel = decision.release
            leakage["reidentification"] = _reidentification(spec, c, rel, (keys, keys_of(rel)))
        return _Decided(c, curve, method, decision, leakage, keys)

    def label(
        self, spec: AuditSpec, source: Any, decided: _Decided, out: Path | None, step: Step
    ) -> Audit:
        d, c = decided, decided.counted
        spec = c.spec
        to_db = spec.write_table is not None
        written = None
        if spec.records and (to_db or out is not None):
            step("labelling every record in the engine")
            if d.decision.mapping is None:
                raise ValidationError(
                    f"the release method {d.method.name!r} gives no mapping of observed tuples "
                    "to label the records in an engine."
                )
            written = []
            files = {"release": RELEASE_FILE, "scores": SCORES_FILE}
            mapping, on = _with_lifts(c, d.decision.mapping, d.keys), list(c.observed)
            if spec.missing == "drop":  # the in-memory files' dropped_missing, in both
                mapping, on = with_dropped(mapping, c.counts, c.dropped, c.observed)
            release, scores = record_columns(mapping, c.observed)
            if spec.missing == "drop":
                release[DROPPED] = f"release_{DROPPED}"
            for (what, name), columns in zip(files.items(), (release, scores), strict=True):
                table = f"{spec.write_table}_{what}" if to_db else None
                target = None if to_db else Path(str(out)) / name
                engines.label_records(
                    source, mapping, on, out=target, engine=c.engine,
                    table=spec.table, write_table=table, columns=columns,
                    bins=c.bins,
                )  # fmt: skip
                written.append(f"table {table}" if to_db else str(target))
        return self._audit(spec, source, d, written)

    def _audit(self, spec: AuditSpec, source: Any, d: _Decided, written: list[str] | None) -> Audit:
        c, dec = d.counted, d.decision
        assert dec.flags is not None and dec.risk is not None
        weight = c.counts["count"].to_numpy(dtype=np.float64)
        name = "+".join(c.sensitive)
        sens = c.sensitive[0] if len(c.sensitive) == 1 else list(c.sensitive)  # as in memory
        shares = value_shares(c.counts, c.sensitive, weight, name, d.keys)
        n = int(weight.sum())
        missing = {k: int(v) for k, v in c.counts.attrs["missing"].items()}
        summary = {
            "n_records": n, "n_input": n + sum(missing.values()) if spec.missing == "drop" else n,
            "n_dropped_missing": sum(missing.values()) if spec.missing == "drop" else 0,
            "sensitive": sens, "observed": c.observed,
            "sensitive_counts": {str(k): int(v) for k, v in (shares * n).round().items()},
            "n_flagged": int(weight[dec.flags].sum()), **dec.summary,
            "n_observed_symbols": distinct_tuples(c.counts, c.observed, d.keys),
        }  # fmt: skip
        stamp = make_stamp(None, n, len(c.sensitive) + len(c.observed))
        stamp["input_name"] = public_source(source)
        return Audit(
            route=self.name, engine=c.engine, route_reason=self.reason,
            settings=spec_settings(spec, sens, c.observed, dec.epsilon, engine=self.engine,
                                   table=spec.table, bins=spec.bins),
            summary=summary,
            epsilon=dec.epsilon, epsilon_reason=dec.epsilon_reason,
            leakage=d.leakage, stamp=stamp, tradeoff=d.curve,
            risk=dec.risk, risk_weight=weight,
            found=dec.found, written=written, details={"missing": missing},
            release_method=d.method,
        )  # fmt: skip


def _with_lifts(c: _Counted, mapping: pd.DataFrame, keys: KeyCodes | None = None) -> pd.DataFrame:
    """The decision's mapping with each tuple's ``log_lift[<value>]`` (``_engine_scores.py``)
    between the released columns and the other scores, so that the scores file has the
    in-memory route's columns in its order. ``keys``: the count table factorised once."""
    s_code = table_codes(c.counts, c.sensitive, keys)
    coded = codes_with(c.counts, mapping, c.observed, keys)
    if coded is not None:
        x_table, x_mapping = coded
    else:
        both = pd.concat([c.counts[c.observed], mapping[c.observed]], ignore_index=True)
        x_code = table_codes(both, c.observed)  # first appearance: the table's own first
        x_table, x_mapping = x_code[: len(c.counts)], x_code[len(c.counts) :]
    joint = table_joint(c.counts, s_code, x_table)
    lifts = lift_columns(joint, value_labels(c.counts, c.sensitive, s_code), x_mapping)
    names = [*c.observed, *(f"release_{o}" for o in c.observed)]
    extra = pd.DataFrame({f"release_{k}": v for k, v in lifts.items()}, index=mapping.index)
    return pd.concat([mapping[names], extra, mapping.drop(columns=names)], axis=1)


def _reidentification(
    spec: AuditSpec,
    c: _Counted,
    released: pd.DataFrame,
    keys: tuple[KeyCodes | None, KeyCodes | None] = (None, None),
) -> dict[str, Any]:
    """Re-identification risk of the release and the input from the folded count table
    (``_reidentification.py``): the input's classes are the observed tuples' counts, the
    release's the released tuples' (one released row per row of the table); no pass over
    the records. A sampling fraction or a population table apply; weights and households
    need the records (refused by :func:`privwatch.audit.plan`)."""
    population = None if spec.population is None else read_population(spec.population, c.observed)
    section, _ = reid_section(
        c.counts[c.observed], released.reset_index(drop=True), c.observed,
        sampling_fraction=spec.sampling_fraction, population=population,
        threshold=spec.risk_threshold, seed=spec.seed,
        counts=c.counts["count"].to_numpy(dtype=np.float64), keys=keys, per_record=False,
    )  # fmt: skip
    return section
