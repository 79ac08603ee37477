"""Cross-fitting a neural log-lift estimator on a streamed source: every record is scored by a
network that never saw it.

The in-memory estimators cross-fit with ``fit_score(cv=K)``; a source too large for memory is
cross-fitted here in the same spirit. Fold ``k`` holds the records whose row position ``r``
has :func:`privwatch.engines.fold_of` ``(r, K, seed) == k`` (the folds of the engines' counts).
Member ``k`` is a clone of the estimator fitted by :meth:`NeuralLift.fit_source` on the other
folds (``leave_out_fold=(K, seed, k)``), so the memory bound of a streamed fit holds for each;
the training time is about K times that of one fit on all records. The members of every
fold (and their ensemble members) train side by side as one stacked program
(:mod:`privwatch.estimators._stacked_lift`): each fold's statistics pass first, then every
epoch steps all the networks together, each reading its own stream.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._rng import check_rng
from ..engines import ROW_COLUMN, fold_of
from ..exceptions import ValidationError
from ._lift import risk_of
from ._stacking import LiftStack, stacking
from ._stream_source import SourceReader

if TYPE_CHECKING:
    from ._neural import NeuralLift

__all__ = ["CrossFittedSource", "cross_fit_source"]


@dataclass
class CrossFittedSource:
    """The ``folds`` members of a streamed cross-fit; ``members[k]`` did not see fold ``k``."""

    members: list[NeuralLift]
    folds: int
    seed: int
    sensitive_labels: list[Any]

    def score_batches(
        self, source: Any, *, keep: Sequence[str] = (), read_rows: int = 65_536
    ) -> Iterator[pd.DataFrame]:
        r"""Score every record of ``source`` with the member that did not see it, batch by batch.

        One frame per batch, in source order: ``privwatch_row`` (the row position), the
        ``keep`` columns, ``fold``, ``risk`` (:math:`\max_s |\hat i(s, x)|`) and
        ``log_lift[<s>]`` per sensitive value. ``source`` must be the one the members were
        fitted on (the folds are row positions)."""
        columns = list(self.members[0].preprocessor_.columns_)
        taken = {ROW_COLUMN, "fold", "risk", *(f"log_lift[{v}]" for v in self.sensitive_labels)}
        if isinstance(keep, str) or taken & set(keep) or len(set(keep)) != len(keep):
            raise ValidationError(
                f"`keep` must list distinct columns other than {sorted(taken)}; got {keep!r}."
            )
        reader = SourceReader(source, [*columns, *(c for c in keep if c not in columns)], read_rows)
        for start, frame in reader.scan():
            rows = np.arange(start, start + len(frame), dtype=np.int64)
            fold = fold_of(rows, self.folds, self.seed)
            ll = np.empty((len(frame), len(self.sensitive_labels)))
            for k in np.unique(fold).tolist():
                sel = fold == k
                ll[sel] = self.members[k].log_lift(frame.loc[sel, columns])
            data: dict[str, Any] = {ROW_COLUMN: rows}
            data.update({c: frame[c].to_numpy() for c in keep})
            data["fold"] = fold
            data["risk"] = risk_of(ll)
            for j, label in enumerate(self.sensitive_labels):
                data[f"log_lift[{label}]"] = ll[:, j]
            yield pd.DataFrame(data)


def cross_fit_source(
    estimator: NeuralLift,
    source: Any,
    sensitive: str,
    observed: Sequence[str],
    *,
    folds: int = 5,
    seed: int = 0,
    read_rows: int = 65_536,
    shuffle_rows: int = 262_144,
    max_validation_rows: int = 100_000,
) -> CrossFittedSource:
    """Fit ``folds`` clones of ``estimator`` on a streamed ``source``, clone ``k`` without the
    records of fold ``k`` (see the module docstring and :meth:`NeuralLift.fit_source`).

    Clone ``k`` gets its own seed drawn from ``estimator.rng`` (None stays None). Every
    sensitive value must occur outside every fold; a value too rare for that is an error
    naming it (use fewer folds, or merge the rare values).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from privwatch.estimators import ClassifierLift
    >>> g = np.random.default_rng(0)
    >>> s = g.integers(0, 2, 3000)
    >>> df = pd.DataFrame({"s": s, "x": s + g.normal(0, 1, 3000)})
    >>> fitted = cross_fit_source(ClassifierLift(epochs=3, n_ensemble=1, rng=0), df, "s", ["x"],
    ...                           folds=3)
    >>> frames = list(fitted.score_batches(df))
    >>> sum(len(f) for f in frames), sorted(set(frames[0]["fold"]))
    (3000, [0, 1, 2])
    """
    fold_of(np.zeros(1, dtype=np.int64), folds, seed)  # validates folds and seed
    seeds: list[int | None]
    if estimator.rng is None:
        seeds = [None] * folds
    else:
        g = check_rng(estimator.rng)
        seeds = [int(v) for v in g.integers(0, 2**62, size=folds)]
    settings = (read_rows, shuffle_rows, max_validation_rows)
    stacked = stacking()
    stack = LiftStack()
    members: list[NeuralLift] = []
    for k in range(folds):
        member = clone(estimator).set_params(rng=seeds[k])
        if stacked:  # the statistics pass now; the members of every fold train together below
            streamed = member._streamed_members(
                source, sensitive, observed, *settings, (folds, seed, k)
            )
            stack.add_streamed(member, streamed)
        else:
            member.fit_source(
                source,
                sensitive,
                observed,
                read_rows=read_rows,
                shuffle_rows=shuffle_rows,
                max_validation_rows=max_validation_rows,
                leave_out_fold=(folds, seed, k),
            )
        if members and member.sensitive_labels_ != members[0].sensitive_labels_:
            first, now = members[0].sensitive_labels_, member.sensitive_labels_
            absent = sorted(set(map(str, first)) ^ set(map(str, now)))
            raise ValidationError(
                f"every value of `{sensitive}` must occur outside every fold; {absent} do not "
                f"(fold {k} of {folds}): use fewer folds or merge the rarest values."
            )
        members.append(member)
    if stack.plans:
        stack.fit()
    return CrossFittedSource(members, int(folds), int(seed), list(members[0].sensitive_labels_))
