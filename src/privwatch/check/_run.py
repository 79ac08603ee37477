"""``check``: judge a release another tool made, with the audit's verdict (``privwatch check``).

Three kinds of release:

- **row-aligned** (generalised, suppressed, perturbed; :mod:`._align`): the cells are the
  distinct released tuples, and the verdict is the audit's (:mod:`._verdict`): exact
  in-sample lifts, the held-out breach figure with its interval, per-value protection, MET / NOT
  MET at ``epsilon`` or the smallest epsilon the release meets;
- **drawn through a saved mechanism** (``mechanism``; :mod:`._channel`): consistent with the
  channel, then the channel judged (not the draw), the randomized method's figures;
- **synthetic** (no row correspondence; :mod:`._synthetic`): the inference attack with a
  control set, the Bayes attacker trained on the synthetic table, the lift of its cells on the
  original records, and the share of original records copied verbatim.

Either way the result is the one :class:`~privwatch.audit.Audit`, written by
:func:`privwatch.report.write_audit` (``leakage.json`` with a ``check`` part, ``report.html``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..audit import (
    METHODS,
    Audit,
    AuditSpec,
    estimate_log_lift,
    file_sha256,
    joint_sensitive,
    make_stamp,
    read_population,
    reid_section,
    release_leakage,
    settings_record,
    stable_leakage,
    tradeoff_curve,
)
from ..engines import read_table
from ..exceptions import ValidationError
from ..release import classic_report
from ._align import Aligned, align
from ._channel import CHANNEL_ROUTE_REASON, SavedChannel, channel_audit, load_channel
from ._result import check_details, check_words, release_result
from ._synthetic import synthetic_audit
from ._verdict import count_release, judge, smallest_met

__all__ = ["check"]

ALIGNED_ROUTE_REASON = (
    "a release made elsewhere, checked against the original it was made from (privwatch "
    "check): both tables in memory"
)


def _table(source: Any, spec: AuditSpec, name: str) -> tuple[pd.DataFrame, Path | None]:
    if isinstance(source, pd.DataFrame):
        return source, None
    if source is None:
        raise ValidationError(f"`{name}` is required: a file or a pandas DataFrame.")
    path = Path(str(source))
    return read_table(path, sep=spec.sep, encoding=spec.encoding), path


def _classic(aligned: Aligned) -> dict[str, Any]:
    """Classic measures of the release as published (the rows it lists) and of the input."""
    sens, obs = aligned.sensitive, aligned.observed
    rel = aligned.released.loc[aligned.listed, obs].reset_index(drop=True)
    for s in sens:
        rel[s] = aligned.original.loc[aligned.listed, s].to_numpy()
    return {
        "release": classic_report(rel, obs, sens).to_dict(),
        "input": classic_report(aligned.original[[*obs, *sens]], obs, sens).to_dict(),
    }


def _reidentification(
    spec: AuditSpec, aligned: Aligned, original: pd.DataFrame
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Re-identification risk of the release as published (the rows it lists) and of the
    input, with the audit's options (``privwatch.audit.reid_section``); per-record risks are
    NaN for records the release does not list."""
    obs, listed = aligned.observed, aligned.listed
    design = {}
    for name in ("weights", "cluster_id"):
        column = getattr(spec, name)
        if column is not None and column not in original.columns:
            raise ValidationError(f"`{name}` must name a column of the original; got {column!r}.")
        # aligned rows are the original's rows, by position
        design[name] = None if column is None else original[column].to_numpy()[listed]
    weights = design["weights"]
    section, per_record = reid_section(
        aligned.original.loc[listed, obs], aligned.released.loc[listed, obs], obs,
        sampling_fraction=spec.sampling_fraction,
        weights=None if weights is None else weights.astype(np.float64),
        population=None if spec.population is None else read_population(spec.population, obs),
        cluster=design["cluster_id"], threshold=spec.risk_threshold, seed=spec.seed,
    )  # fmt: skip
    full = pd.DataFrame(np.nan, index=range(len(listed)), columns=per_record.columns)
    full.loc[np.flatnonzero(listed)] = per_record.to_numpy()
    return section, full


def _watchdog(aligned: Aligned, epsilon: float, seed: int) -> tuple[Any, pd.DataFrame]:
    """The plug-in watchdog of the original (the audit's: leakage before, record risks,
    tradeoff curve), at ``epsilon``."""
    sens = aligned.sensitive
    frame = pd.DataFrame({c: aligned.original[c].astype(str) for c in aligned.original})
    frame, name, obs, _ = joint_sensitive(frame, sens[0] if len(sens) == 1 else sens,
                                          aligned.observed)  # fmt: skip
    probe, risk, grid = estimate_log_lift(frame, name, list(obs or []), None, None, seed)
    curve = tradeoff_curve(probe, True, risk, frame[name], grid)
    return probe.set_params(delta=None).rethreshold(epsilon), curve


def _aligned(spec: AuditSpec, original: pd.DataFrame, release: pd.DataFrame,
             key: str | None) -> tuple[dict[str, Any], Audit]:  # fmt: skip
    sens = list(spec.sensitive or ())
    aligned = align(original, release, sens, spec.observed, key)
    fixed = count_release(aligned, spec.folds, spec.seed)
    if spec.epsilon is None:
        judged, reason = smallest_met(fixed, spec.disclosure, spec.held_out_tolerance, spec.seed)
    else:
        judged = judge(fixed, spec.epsilon, spec.disclosure, spec.held_out_tolerance, spec.seed)
        reason = "given by the user"
    found = release_result(aligned, fixed, judged)
    name = "+".join(sens)
    joint = aligned.original[sens].astype(str).agg("|".join, axis=1).rename(name)
    wd, curve = _watchdog(aligned, judged.epsilon, spec.seed)
    leakage = found.to_dict()
    leakage["guarantee_in_words"] = check_words(found, fixed, judged, name)
    leakage["before"] = wd.leakage_before_.to_dict()
    leakage["after"] = release_leakage(joint, aligned.released).to_dict()
    leakage["classic"] = _classic(aligned) if spec.checks else None
    per_record = None
    if spec.checks:
        leakage["reidentification"], per_record = _reidentification(spec, aligned, original)
    utility = {
        "information_nats": found.information_nats,
        "information_input_nats": found.information_input_nats,
        "flagged_probability": float(found.records["flagged"].mean()),
    }
    scores = found.records.drop(columns=["advice_column", "advice_risk"])
    if per_record is not None:
        for column in per_record.columns:
            scores[column] = per_record[column].to_numpy()
    n = len(aligned.original)
    audit = Audit(
        route="memory", engine="pandas", route_reason=ALIGNED_ROUTE_REASON,
        settings={}, summary=_summary(aligned, found.records, name), epsilon=judged.epsilon,
        epsilon_reason=reason, leakage=stable_leakage(leakage, utility), stamp={},
        tradeoff=curve, risk=found.records["risk"].to_numpy(), risk_weight=np.ones(n),
        found=found, watchdog=wd, scores=scores, release=aligned.released,
        data=aligned.original, input_rows=np.arange(n),
        details={"check": check_details(aligned, fixed, judged)},
        release_method=METHODS["search"],  # judged as a generalisation: the search's figures
    )  # fmt: skip
    return {"observed": aligned.observed}, audit


def _mechanism(spec: AuditSpec, original: pd.DataFrame, release: pd.DataFrame,
               key: str | None, saved: SavedChannel) -> tuple[dict[str, Any], Audit]:  # fmt: skip
    """A release drawn through ``saved``, judged against it (:mod:`._channel`)."""
    judged = channel_audit(spec, original, release, key, saved)
    aligned, name = judged.aligned, "+".join(judged.aligned.sensitive)
    wd, curve = _watchdog(aligned, judged.epsilon, spec.seed)
    leakage = {**judged.leakage, "before": wd.leakage_before_.to_dict(),
               "classic": _classic(aligned) if spec.checks else None}  # fmt: skip
    scores, n = judged.scores, len(aligned.original)
    summary = {
        "n_records": n, "n_input": n, "n_dropped_missing": 0,
        "sensitive": aligned.sensitive[0] if len(aligned.sensitive) == 1 else aligned.sensitive,
        "sensitive_counts": {str(k): int(v) for k, v in aligned.original[aligned.sensitive]
                             .astype(str).agg("|".join, axis=1).value_counts().items()},
        "observed": aligned.observed, "n_flagged": int(scores["flagged"].sum()),
        "n_suppressed": judged.leakage["release"]["suppressed_records"],
        "n_randomized": judged.leakage["release"]["altered_records"], "sensitive_name": name,
    }  # fmt: skip
    reason = "given by the user" if spec.epsilon is not None else "the mechanism's (saved with it)"
    audit = Audit(
        route="memory", engine="pandas", route_reason=CHANNEL_ROUTE_REASON, settings={},
        summary=summary, epsilon=judged.epsilon, epsilon_reason=reason,
        leakage=stable_leakage(leakage, judged.utility), stamp={}, tradeoff=curve,
        risk=scores["risk"].to_numpy(), risk_weight=np.ones(n), watchdog=wd, scores=scores,
        release=aligned.released, data=aligned.original, input_rows=np.arange(n),
        details={"check": judged.details}, release_method=METHODS["randomized"],
    )  # fmt: skip
    return {"observed": aligned.observed}, audit


def _summary(aligned: Aligned, records: pd.DataFrame, name: str) -> dict[str, Any]:
    n = len(aligned.original)
    joint = aligned.original[aligned.sensitive].astype(str).agg("|".join, axis=1)
    sensitive = aligned.sensitive[0] if len(aligned.sensitive) == 1 else aligned.sensitive
    return {
        "n_records": n, "n_input": n, "n_dropped_missing": 0, "sensitive": sensitive,
        "sensitive_counts": {str(k): int(v) for k, v in joint.value_counts().items()},
        "observed": aligned.observed, "n_flagged": int(records["flagged"].sum()),
        "n_suppressed": int(aligned.suppressed.sum()),
        "n_perturbed": int(aligned.perturbed.sum()), "sensitive_name": name,
    }  # fmt: skip


def check(
    original: Any,
    release: Any,
    spec: AuditSpec | None = None,
    *,
    key: str | None = None,
    synthetic: bool = False,
    control: Any = None,
    mechanism: Any = None,
    **options: Any,
) -> Audit:
    """Judge ``release``, made from ``original`` by another tool, as the audit would.

    Parameters
    ----------
    original, release
        Files (CSV, Excel, Parquet, JSON Lines) or pandas DataFrames.
    spec, options
        The audit options (:class:`AuditSpec` or its fields): ``sensitive`` (required),
        ``observed`` (default: the columns both tables share), ``epsilon`` (None: the smallest
        epsilon the release meets), ``disclosure``, ``folds``, ``held_out_tolerance``,
        ``checks`` (classic measures), ``seed``, ``sep``, ``encoding``.
    key
        Align the release by this column (module docstring of :mod:`._align`); None:
        the release lists the original's records in order.
    synthetic, control
        A synthetic table (no row correspondence), and the records its generator never saw
        (the attack's control set; without it the attack is not run).
    mechanism
        The saved mechanism the release was drawn from (a file written by ``save_mechanism``:
        a ``RandomizedChannel``, or a ``Generalisation``): the release is checked to be
        consistent with it and judged on the channel, not on the draw (:mod:`._channel`);
        ``sensitive``, ``epsilon`` and ``disclosure`` default to the mechanism's.

    Returns
    -------
    Audit
        ``leakage.json`` (``to_dict()``) has the audit's keys and a ``check`` part.

    Examples
    --------
    >>> orig = pd.DataFrame({"s": list("ab") * 50, "x": list("pq") * 25 + list("qp") * 25})
    >>> rel = orig[["x"]].copy()
    >>> result = check(orig, rel, sensitive="s", epsilon=0.5, folds=0)
    >>> result.satisfied, result.leakage["release"]["method"]
    (True, 'external')
    """
    saved = None if mechanism is None else load_channel(mechanism)
    if saved is not None:
        if synthetic:
            raise ValidationError("`mechanism` is for a row-aligned release, not `synthetic`.")
        if spec is None:
            options.setdefault("disclosure", saved.disclosure)
            if options.get("sensitive") is None:
                options["sensitive"] = saved.sensitive.split("+")
    spec = AuditSpec.from_options(options) if spec is None else spec.replace(**options)
    if not spec.sensitive:
        raise ValidationError("`sensitive` is required: name the sensitive column.")
    orig, orig_path = _table(original, spec, "original")
    rel, rel_path = _table(release, spec, "release")
    if synthetic:
        ctl = None if control is None else _table(control, spec, "control")[0]
        extra, result = synthetic_audit(spec, orig, rel, ctl)
    else:
        if control is not None:
            raise ValidationError("`control` is for a synthetic release (`synthetic`=True).")
        extra, result = (_aligned(spec, orig, rel, key) if saved is None
                         else _mechanism(spec, orig, rel, key, saved))  # fmt: skip
    result.stamp = make_stamp(orig_path, *orig.shape)
    result.settings = _settings(spec, result.epsilon, extra["observed"], key, synthetic)
    if saved is not None:
        result.settings["mechanism"] = saved.name
    result.details["check"].update(
        release_name=None if rel_path is None else rel_path.name,
        release_sha256=None if rel_path is None or not rel_path.is_file()
        else file_sha256(rel_path),
    )  # fmt: skip
    return result


def _settings(
    spec: AuditSpec, epsilon: float, observed: list[str], key: str | None, synthetic: bool
) -> dict[str, Any]:
    sens = list(spec.sensitive or ())
    options = {
        "sensitive": sens[0] if len(sens) == 1 else sens, "observed": observed,
        "epsilon": epsilon if math.isfinite(epsilon) else None,
        "epsilon_given": spec.epsilon is not None, "estimator": "plugin",
        "disclosure": spec.disclosure, "folds": spec.folds,
        "held_out_tolerance": spec.held_out_tolerance, "checks": spec.checks,
        "report_records": False, "rng": spec.seed, "key": key, "synthetic": synthetic,
    }  # fmt: skip
    return settings_record(options, None, None)
