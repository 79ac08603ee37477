r"""The audit of a Parquet lake with a learned log-lift estimator, streamed, never in memory.

The engine audit (:func:`privwatch.report.audit_source`) needs only counts; a neural estimator
needs the records themselves, so this route reads them in batches (one Parquet row group at a
time) and holds only the networks, a shuffle buffer and the validation records
(:meth:`privwatch.estimators.ClassifierLift.fit_source`). Like the in-memory audit with
``estimator="classifier"`` (the record-level watchdog, Hsu et al. §IV), every record is
scored **cross-fitted** — by a network that did not train on it
(:func:`privwatch.estimators.cross_fit_source`) — flagged when its risk
:math:`\max_s |\hat i(s, x)|` exceeds epsilon, and released with its observed values, or with
every observed value replaced by a marker when flagged (the flagged records merged into one
released value). The guarantee is :func:`privwatch.watchdog.flagged_set_guarantee` of the
counts: an estimate, not a proof, since the log-lift is learned.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..engines import parquet_files, write_parquet_frames
from ..estimators import ClassifierLift, DVLift, cross_fit_source
from ..exceptions import ValidationError
from ..watchdog import Guarantee, flagged_set_guarantee, safe_marker
from ._stamp import privwatch_version
from ._write import jsonable

__all__ = ["NEURAL_SOURCE_ESTIMATORS", "NeuralSourceAudit", "audit_source_neural"]

Step = Callable[[str], None]
#: The learned estimators that train on a streamed source.
NEURAL_SOURCE_ESTIMATORS = {"classifier": ClassifierLift, "dv": DVLift}


@dataclass
class NeuralSourceAudit:
    """What :func:`audit_source_neural` produced.

    ``guarantee`` is the release's estimated lift-privacy guarantee; ``n_flagged`` the records
    whose cross-fitted risk exceeds ``epsilon``; ``mutual_information_estimate`` the mean
    cross-fitted log-lift of each record's own sensitive value (nats); ``written`` the Parquet
    file of every record's scores and release; ``markers`` the value that replaces each observed
    column of a flagged record (``*``, longer when the column holds ``*`` already).
    """

    source: str
    estimator: str
    folds: int
    n_records: int
    sensitive_counts: dict[str, int]
    epsilon: float
    guarantee: Guarantee
    n_flagged: int
    mutual_information_estimate: float
    written: str
    markers: dict[str, str]

    @property
    def satisfied(self) -> bool:
        """Whether the release meets epsilon: no sensitive value's odds move by more than
        e^epsilon on the merged flagged records (kept records meet it by construction)."""
        return self.guarantee.breach_probability <= 1e-12

    @property
    def reasons(self) -> list[str]:
        """Why the release does not meet epsilon (empty when it does)."""
        if self.satisfied:
            return []
        g = self.guarantee
        return [
            f"the {self.n_flagged:,} flagged records, merged into one released value, still "
            f"reveal the sensitive value: their log-lift reaches {g.randomized_epsilon:.3g} "
            f"nats > epsilon {self.epsilon:g}, for {g.breach_probability:.3g} of the records",
        ]

    @property
    def alternatives(self) -> list[str]:
        """The nearest feasible settings (empty when met)."""
        if self.satisfied:
            return []
        return [
            f"a larger epsilon (at least {self.guarantee.randomized_epsilon:.3g} nats), or the "
            "plug-in route (--estimator plugin) whose release search generalises and suppresses "
            "with an exact in-sample guarantee and a held-out check",
        ]

    def to_dict(self) -> dict[str, Any]:
        """The content of ``leakage.json`` for a streamed neural audit (JSON types only)."""
        doc = {
            "route": "engine-neural",
            "status": "met" if self.satisfied else "not_met",
            "reasons": self.reasons,
            "alternatives": self.alternatives,
            "source": self.source,
            "estimator": self.estimator,
            "scoring": f"cross-fitted, {self.folds} folds (privwatch.engines.fold_of of the row)",
            "n_records": self.n_records,
            "sensitive_counts": self.sensitive_counts,
            "epsilon": self.epsilon,
            "n_flagged": self.n_flagged,
            "guarantee": self.guarantee.to_dict(),
            "guarantee_in_words": self.guarantee.explain(),
            "mutual_information_estimate": self.mutual_information_estimate,
            "written": self.written,
            "markers": self.markers,
            "privwatch_version": privwatch_version(),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        return dict(jsonable(doc))


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
    """``release_<col>``: the observed value as text, the column's marker where flagged."""
    return {
        f"release_{c}": np.where(flagged, m, frame[c].astype(str).to_numpy(dtype=object))
        for c, m in markers.items()
    }


def audit_source_neural(
    source: str | Path,
    sensitive: str,
    observed: Sequence[str],
    *,
    epsilon: float,
    out: str | Path,
    estimator: str = "classifier",
    folds: int = 5,
    rng: int = 0,
    step: Step | None = None,
    read_rows: int = 65_536,
    **estimator_params: Any,
) -> NeuralSourceAudit:
    """Audit a Parquet file or glob with a learned log-lift estimator, streamed.

    ``estimator`` is ``"classifier"`` (:class:`~privwatch.estimators.ClassifierLift`) or
    ``"dv"`` (:class:`~privwatch.estimators.DVLift`), built with ``rng`` and
    ``estimator_params``; ``folds`` (at least 2) cross-fitting folds. ``out`` (``.parquet``)
    receives every record, in source order: ``privwatch_row``, ``fold``, ``risk``,
    ``log_lift[<s>]``, ``flagged`` and ``release_<col>`` per observed column (the value as
    text; where flagged, the marker ``*``, or ``**``, ... when the column holds ``*`` already:
    ``markers``). Written through ``out.partial``, renamed when complete.

    Examples
    --------
    >>> import os, tempfile
    >>> g = np.random.default_rng(0)
    >>> s = g.integers(0, 2, 3000)
    >>> df = pd.DataFrame({"s": s, "x": s + g.normal(0, 1, 3000)})
    >>> d = tempfile.mkdtemp()
    >>> df.to_parquet(os.path.join(d, "t.parquet"), row_group_size=1000)
    >>> res = audit_source_neural(os.path.join(d, "t.parquet"), "s", ["x"], epsilon=2.0,
    ...     out=os.path.join(d, "release.parquet"), folds=2, epochs=3, n_ensemble=1)
    >>> res.n_records, pd.read_parquet(res.written).columns.tolist()[:3]
    (3000, ['privwatch_row', 'fold', 'risk'])
    """
    if estimator not in NEURAL_SOURCE_ESTIMATORS:
        raise ValidationError(
            f"`estimator` must be one of {sorted(NEURAL_SOURCE_ESTIMATORS)} for a streamed "
            f"source; got {estimator!r}."
        )
    if not isinstance(epsilon, int | float) or isinstance(epsilon, bool) or not epsilon > 0:
        raise ValidationError(f"`epsilon` must be a positive number; got {epsilon!r}.")
    if not isinstance(sensitive, str):
        raise ValidationError(
            f"`sensitive` must be one column name for a streamed neural audit; got {sensitive!r}."
        )
    path = Path(out)
    if path.suffix != ".parquet" or not path.parent.is_dir():
        raise ValidationError(f"`out` must be a .parquet path in an existing folder; got {out!r}.")
    files = parquet_files(str(source))
    if not all(f.lower().endswith((".parquet", ".parq")) for f in files):
        raise ValidationError(
            "a learned estimator streams Parquet files (.parquet); convert the source to "
            f"Parquet, or audit it with the plug-in counts; got {files[:3]}."
        )
    obs = list(observed)
    if sensitive in obs:
        raise ValidationError(f"`observed` must not include the sensitive column {sensitive!r}.")
    say = step or (lambda _msg: None)
    model = NEURAL_SOURCE_ESTIMATORS[estimator](rng=rng, **estimator_params)
    say(f"training {folds} cross-fitted {type(model).__name__} models on streamed batches")
    fitted = cross_fit_source(model, source, sensitive, obs, folds=folds, seed=rng)
    labels = fitted.sensitive_labels
    markers = _markers(fitted.members, obs)
    position = {str(v): j for j, v in enumerate(labels)}
    counts = np.zeros(len(labels), dtype=np.int64)
    flagged_counts = np.zeros(len(labels), dtype=np.int64)
    kept_risk, own_log_lift = 0.0, 0.0
    say("scoring, flagging and writing every record")

    def labelled() -> Iterator[pd.DataFrame]:
        nonlocal kept_risk, own_log_lift
        for frame in fitted.score_batches(source, keep=[sensitive, *obs], read_rows=read_rows):
            codes = frame[sensitive].astype(str).map(position).to_numpy(dtype=np.int64)
            risk = frame["risk"].to_numpy()
            flagged = risk > epsilon
            counts[:] += np.bincount(codes, minlength=len(labels))
            flagged_counts[:] += np.bincount(codes[flagged], minlength=len(labels))
            if (~flagged).any():
                kept_risk = max(kept_risk, float(risk[~flagged].max()))
            ll = frame[[f"log_lift[{v}]" for v in labels]].to_numpy()
            own_log_lift += float(ll[np.arange(len(frame)), codes].sum())
            body = frame.drop(columns=[sensitive, *obs])
            body["flagged"] = flagged
            yield body.assign(**_release_columns(frame, markers, flagged))

    write_parquet_frames(labelled(), path)
    n = int(counts.sum())
    basis = f"estimated by {type(model).__name__} on streamed records, cross-fitted ({folds} folds)"
    guarantee = flagged_set_guarantee(counts, flagged_counts, kept_risk, float(epsilon), basis)
    return NeuralSourceAudit(
        source=str(source),
        estimator=estimator,
        folds=int(folds),
        n_records=n,
        sensitive_counts={str(v): int(c) for v, c in zip(labels, counts, strict=True)},
        epsilon=float(epsilon),
        guarantee=guarantee,
        n_flagged=int(flagged_counts.sum()),
        mutual_information_estimate=own_log_lift / n,
        written=str(path),
        markers=markers,
    )
