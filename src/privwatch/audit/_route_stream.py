r"""The audit of a Parquet lake with a learned log-lift estimator, streamed, never in memory.

The engine route (:class:`privwatch.audit.EngineRoute`) needs only counts; a neural estimator
needs the records themselves, so this route reads them in batches (one Parquet row group at a
time) and holds only the networks, a shuffle buffer and the validation records
(:meth:`privwatch.estimators.ClassifierLift.fit_source`). Like the in-memory audit with
``estimator="classifier"`` (the record-level watchdog, Hsu et al. §IV), every record is
scored **cross-fitted** — by a network that did not train on it
(:func:`privwatch.estimators.cross_fit_source`) — flagged when its risk
:math:`\max_s |\hat i(s, x)|` exceeds epsilon, and released with its observed values, or with
every observed value replaced by a marker when flagged (the flagged records merged into one
released value). The records are written as the in-memory route's two files, in the same pass:
``release.parquet`` (the record key and the released observed columns: publishable) and
``scores.parquet`` (the record key, the fold whose network scored it, each value's log-lift,
risk and flag). The guarantee is
:func:`privwatch.watchdog.flagged_set_guarantee` of the counts: an estimate, not a proof, since
the log-lift is learned. What is released is the
release method ``watchdog``'s (:mod:`privwatch.audit._method_watchdog`, through
:func:`~privwatch.audit.method_for`): its decision gives the threshold this route flags at while
it labels, and its section of leakage.json follows from the counts of that pass.

**Held-out figure.** While it labels, the route keeps a uniform sample of
:data:`HELD_SAMPLE` records (their observed values, cross-fitted log-lifts, labels and
flags); after the pass every member scores them, and the release gets the learned watchdog's
held-out breach estimate with its 95 % interval (the recalibration on the sample's held-out
labels, the members' grouped jackknife as the error shared by every record) and the one
verdict rule (:func:`privwatch.audit._learned.held_out_of_sample`): NOT MET when the interval
is not within the tolerance. The flags stay the point rule (risk > epsilon): one pass cannot
walk margins, so a NOT MET here advises a smaller epsilon.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..engines import ROW_COLUMN, parquet_files, write_parquet_files
from ..exceptions import ValidationError
from ..watchdog import safe_marker
from ._learned import held_out_of_sample
from ._method import Decision, Measured, ReleaseMethod, check_route
from ._registry import method_for
from ._result import Audit
from ._route import RECORD_KEY, RELEASE_FILE, SCORES_FILE, Route, Step
from ._spec import AuditSpec
from ._stamp import make_stamp
from ._steps import spec_settings

__all__ = ["STREAM_ESTIMATORS", "StreamRoute"]

#: The learned estimators that train on a streamed source (option name -> class of
#: :mod:`privwatch.estimators`, imported when one trains).
STREAM_ESTIMATORS = {"classifier": "ClassifierLift", "dv": "DVLift"}
#: Records read from the Parquet files at a time while scoring.
READ_ROWS = 65_536


def _markers(members: Sequence[Any], observed: list[str]) -> dict[str, str]:
    """The suppression marker of each observed column: ``*``, or ``**``, ``***``, ... when the
    column holds that text already (:func:`privwatch.watchdog.safe_marker`). Only a categorical
    column can; its values are the union of the members' categories, which covers every record
    (each record trained every member but the one of its fold)."""
    markers = {}
    for c in observed:
        values: set[str] = set()
        for m in members:
            values.update(str(v) for v in m.preprocessor_.categories_.get(c, []))
        markers[c] = safe_marker("*", values)
    return markers


def _release_columns(
    frame: pd.DataFrame, markers: dict[str, str], flagged: np.ndarray
) -> dict[str, Any]:
    """Each observed column released: the value as text, the column's marker where flagged."""
    return {
        c: np.where(flagged, m, frame[c].astype(str).to_numpy(dtype=object))
        for c, m in markers.items()
    }


@dataclass
class _Trained:
    fitted: Any
    model: Any
    files: list[str]


@dataclass
class _Decided:
    trained: _Trained
    table: Measured
    method: ReleaseMethod
    decision: Decision


@dataclass
class _Scored:
    labels: list[Any]
    counts: np.ndarray
    flagged: np.ndarray
    kept_risk: float
    own_log_lift: float
    markers: dict[str, str]
    risk: list[np.ndarray]
    seen: int = 0
    stride: int = 1
    #: A uniform sample of the records for the held-out figure (:func:`_keep_held`).
    held: _HeldSample | None = None


@dataclass
class _HeldSample:
    """Up to :data:`HELD_SAMPLE` records, those with the smallest uniform keys so far (a
    uniform sample without replacement, whatever the number of records)."""

    key: np.ndarray
    frame: pd.DataFrame
    log_lift: np.ndarray
    codes: np.ndarray
    flags: np.ndarray


class StreamRoute(Route):
    """A learned log-lift estimator trained and scored on Parquet batches (see the module
    docstring): measure trains the cross-fitted networks, label scores, flags and writes every
    record in one pass; the guarantee follows from the counts
    (:func:`privwatch.watchdog.flagged_set_guarantee`)."""

    name = "stream"
    steps = 3

    def measure(self, spec: AuditSpec, source: Any, step: Step) -> _Trained:
        if not spec.sensitive or len(spec.sensitive) != 1:
            raise ValidationError(
                "`sensitive` must be one column name for a streamed neural audit; got "
                f"{spec.sensitive!r}."
            )
        if spec.observed is None:
            raise ValidationError("`observed` is required with a file or glob.")
        files = parquet_files(str(source))
        if not all(f.lower().endswith((".parquet", ".parq")) for f in files):
            raise ValidationError(
                "a learned estimator streams Parquet files (.parquet); convert the source to "
                f"Parquet, or audit it with the plug-in counts; got {files[:3]}."
            )
        sens, obs = spec.sensitive[0], list(spec.observed)
        if sens in obs:
            raise ValidationError(f"`observed` must not include the sensitive column {sens!r}.")
        from .. import estimators  # here: the learned families load scikit-learn and PyTorch

        family = getattr(estimators, STREAM_ESTIMATORS[spec.estimator])
        model = family(rng=spec.seed, **spec.estimator_params)
        name = type(model).__name__
        step(f"training {spec.folds} cross-fitted {name} models on streamed batches")
        fitted = estimators.cross_fit_source(
            model, str(source), sens, obs, folds=spec.folds, seed=spec.seed
        )
        return _Trained(fitted, model, files)

    def decide(self, spec: AuditSpec, measured: _Trained, step: Step) -> _Decided:
        # epsilon is the user's (required on this route); a record is flagged where its
        # cross-fitted risk exceeds the decision's epsilon, while the records are scored (label)
        basis = (
            f"estimated by {type(measured.model).__name__} on streamed records, cross-fitted "
            f"({spec.folds} folds)"
        )
        sens, obs = str(spec.sensitive[0]), list(spec.observed or ())  # type: ignore[index]
        table = Measured(
            self.name, sens, [sens], obs, float(spec.epsilon),  # type: ignore[arg-type]
            "given by the user", scorer=measured, basis=basis,
        )  # fmt: skip
        method = method_for(spec)
        check_route(method, self.name)
        return _Decided(measured, table, method, method.decide(spec, table, step))

    def label(
        self, spec: AuditSpec, source: Any, decided: _Decided, out: Path | None, step: Step
    ) -> Audit:
        if not spec.records:  # scored and counted, not written
            step("scoring and flagging every record")
            return self._audit(spec, source, decided, _score_and_write(spec, str(source), decided))
        if out is None or not Path(out).is_dir():
            raise ValidationError(
                f"`out` must be an existing folder: the streamed route writes its records; got "
                f"{out!r}."
            )
        paths = [Path(out) / RELEASE_FILE, Path(out) / SCORES_FILE]
        step("scoring, flagging and writing every record")
        scored = _score_and_write(spec, str(source), decided, paths)
        return self._audit(spec, source, decided, scored, paths)

    def _audit(
        self,
        spec: AuditSpec,
        source: Any,
        d: _Decided,
        sc: _Scored,
        paths: list[Path] | None = None,
    ) -> Audit:
        n = int(sc.counts.sum())
        dec = d.decision
        dec.tally = sc
        eps = dec.epsilon
        sens, obs = d.table.sensitive, d.table.observed
        summary = {
            "n_records": n, "n_input": n, "n_dropped_missing": 0, "sensitive": sens,
            "observed": obs, "n_flagged": int(sc.flagged.sum()),
            "sensitive_counts": {str(v): int(c) for v, c in zip(sc.labels, sc.counts, strict=True)},
        }  # fmt: skip
        stamp = make_stamp(None, n, 1 + len(obs))
        stamp["input_name"] = str(source)
        risk = np.concatenate(sc.risk) if sc.risk else np.zeros(0)
        leakage = _with_held_out(
            spec, d, sc, d.method.leakage(spec, d.table, dec), pd.Series(sc.counts, sc.labels)
        )
        return Audit(
            route=self.name, engine="stream", route_reason=self.reason,
            settings=spec_settings(spec, sens, obs, eps, search=False), summary=summary,
            epsilon=eps,
            epsilon_reason=dec.epsilon_reason,
            leakage=leakage,
            stamp=stamp, risk=risk, risk_weight=np.ones(len(risk)),
            written=None if paths is None else [str(p) for p in paths],
            details={
                "estimator": spec.estimator, "markers": sc.markers,
                "scoring": f"cross-fitted, {spec.folds} folds (privwatch.engines.fold_of of the "
                "row)",
            },
            release_method=d.method,
        )  # fmt: skip


def _with_held_out(
    spec: AuditSpec, d: _Decided, sc: _Scored, leakage: dict[str, Any], counts: pd.Series
) -> dict[str, Any]:
    """``leakage`` with the held-out figure of the sampled records and the verdict rule's
    reasons added (:func:`privwatch.audit._learned.held_out_of_sample`)."""
    h = sc.held
    if h is None or not len(h.key):
        return leakage
    members = np.stack([m.log_lift(h.frame) for m in d.trained.fitted.members])
    held, reasons = held_out_of_sample(
        spec, float(d.decision.epsilon), h.log_lift, members, h.codes, h.flags, counts,
        int(sc.flagged.sum()),
    )  # fmt: skip
    if held is None:
        return leakage
    out = dict(leakage)
    out["held_out"] = held.to_dict()
    out["reasons"] = [*leakage["reasons"], *(r for r in reasons if r not in leakage["reasons"])]
    out["status"] = "not_met" if out["reasons"] else "met"
    return out


#: Record risks kept for the risk figure (every k-th record beyond this many).
RISK_SAMPLE = 1_000_000
#: Records sampled (uniformly) for the streamed release's held-out breach estimate.
HELD_SAMPLE = 20_000


def _keep_held(
    sc: _Scored, g: np.random.Generator, frame: pd.DataFrame, ll: np.ndarray,
    codes: np.ndarray, flags: np.ndarray,
) -> None:  # fmt: skip
    """Merge a batch into the held-out sample: keep the :data:`HELD_SAMPLE` smallest keys."""
    key = g.random(len(frame))
    new = _HeldSample(key, frame.reset_index(drop=True), ll, codes, flags)
    old = sc.held
    if old is not None:
        new = _HeldSample(
            np.concatenate([old.key, key]), pd.concat([old.frame, new.frame], ignore_index=True),
            np.concatenate([old.log_lift, ll]), np.concatenate([old.codes, codes]),
            np.concatenate([old.flags, flags]),
        )  # fmt: skip
    if len(new.key) > HELD_SAMPLE:
        keep = np.sort(np.argpartition(new.key, HELD_SAMPLE)[:HELD_SAMPLE])
        new = _HeldSample(
            new.key[keep], new.frame.iloc[keep].reset_index(drop=True), new.log_lift[keep],
            new.codes[keep], new.flags[keep],
        )  # fmt: skip
    sc.held = new


def _keep_sample(sc: _Scored, risk: np.ndarray) -> None:
    """Keep every ``stride``-th risk, doubling the stride whenever more than
    :data:`RISK_SAMPLE` are kept: memory stays bounded on any number of records."""
    stride = int(sc.stride)
    # a copy: a strided view would keep its whole batch (and the batch's frame) alive, which
    # grew the memory with the stride, i.e. with the number of records
    sc.risk.append(risk[(-sc.seen) % stride :: stride].copy())
    sc.seen += len(risk)
    if sum(len(r) for r in sc.risk) > RISK_SAMPLE:
        sc.risk = [np.concatenate(sc.risk)[::2].copy()]
        sc.stride *= 2


def _score_and_write(
    spec: AuditSpec, source: str, d: _Decided, paths: list[Path] | None = None
) -> _Scored:
    """One pass over the records: score (cross-fitted), flag at the decision's epsilon, count
    and write them (the release and the scores to ``paths``; not written when it is None)."""
    t, sens, obs = d.trained, d.table.sensitive, d.table.observed
    labels = list(t.fitted.sensitive_labels)
    position = {str(v): j for j, v in enumerate(labels)}
    sc = _Scored(
        labels, np.zeros(len(labels), np.int64), np.zeros(len(labels), np.int64), 0.0, 0.0,
        _markers(t.fitted.members, obs), [],
    )  # fmt: skip
    eps = d.decision.epsilon
    g = np.random.default_rng(spec.seed)
    columns = list(t.fitted.members[0].preprocessor_.columns_)

    def labelled() -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
        for frame in t.fitted.score_batches(source, keep=[sens, *obs], read_rows=READ_ROWS):
            codes = frame[sens].astype(str).map(position).to_numpy(dtype=np.int64)
            risk = frame["risk"].to_numpy()
            flagged = risk > eps
            sc.counts[:] += np.bincount(codes, minlength=len(labels))
            sc.flagged[:] += np.bincount(codes[flagged], minlength=len(labels))
            _keep_sample(sc, np.asarray(risk, dtype=np.float64))
            if (~flagged).any():
                sc.kept_risk = max(sc.kept_risk, float(risk[~flagged].max()))
            lift = [f"log_lift[{v}]" for v in labels]
            ll = frame[lift].to_numpy()
            sc.own_log_lift += float(ll[np.arange(len(frame)), codes].sum())
            _keep_held(sc, g, frame[columns], ll, codes, flagged)
            key = {RECORD_KEY: frame[ROW_COLUMN].to_numpy()}
            release = pd.DataFrame({**key, **_release_columns(frame, sc.markers, flagged)})
            scores = pd.DataFrame({**key, **{c: frame[c].to_numpy() for c in ["fold", *lift]}})
            scores["risk"] = risk
            scores["flagged"] = flagged
            yield release, scores

    if paths is None:
        for _ in labelled():
            pass
    else:
        write_parquet_files(labelled(), paths)
    return sc
