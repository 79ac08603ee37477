"""The verdict on a fixed release as the audit's one result: a ``ReleaseResult`` and its words.

The report and the command line render a checked release exactly as a searched one
(``Audit.found``): the same figures, the same verdict lines; ``method`` is ``"external"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..audit import explain_release
from ..release import ReleaseResult, explain_protection
from ..release.cells import cell_counts
from ._align import Aligned
from ._verdict import FixedRelease, Judged, information

__all__ = ["check_words", "release_result"]


def _records(aligned: Aligned, fixed: FixedRelease, judged: Judged) -> pd.DataFrame:
    """Per record: its original tuple's risk (before release, as the audit's scores), whether
    it is flagged, suppressed or perturbed, and its released cell's log-lift."""
    total = fixed.table.total()
    box = fixed.box(judged.epsilon, judged.disclosure)
    n_tuples = int(fixed.record_tuple.max()) + 1 if len(fixed.record_tuple) else 0
    risk = box.worst(cell_counts(fixed.row_tuple, n_tuples, total))[fixed.record_tuple]
    return pd.DataFrame(
        {
            "risk": risk,
            "flagged": risk > judged.epsilon + 1e-12,
            "suppressed": aligned.suppressed,
            "perturbed": aligned.perturbed,
            "released_cell_log_lift": judged.worst[fixed.record_cell],
            "cell_breaks": judged.worst[fixed.record_cell] > judged.epsilon + 1e-12,
            "advice_column": "",
            "advice_risk": np.nan,
        }
    )


def release_result(aligned: Aligned, fixed: FixedRelease, judged: Judged) -> ReleaseResult:
    """The checked release as a :class:`~privwatch.release.ReleaseResult`."""
    kept, total = information(fixed)
    sizes = np.bincount(fixed.record_cell, minlength=fixed.n_cells)
    unique = int(((sizes == 1) & (np.arange(fixed.n_cells) != fixed.star)).sum())
    sens = list(aligned.sensitive)
    names = ["joint", *sens] if len(sens) > 1 else sens
    n = len(aligned.original)
    suppressed = int(aligned.suppressed.sum())
    return ReleaseResult(
        satisfied=judged.satisfied,
        reasons=list(judged.reasons),
        alternatives=[],
        epsilon=judged.epsilon,
        disclosure=judged.disclosure,
        max_suppressed=suppressed / n if n else 0.0,
        method="external",
        generalisation=aligned.state_counts(),
        information_nats=kept,
        information_global_nats=kept,
        information_local_nats=None,
        information_input_nats=total,
        suppressed_records=suppressed,
        perturbed_records=int(aligned.perturbed.sum()),
        n_records=n,
        max_log_lift=judged.max_log_lift,
        max_log_lift_by_attribute={
            k: float(v) for k, v in zip(names, judged.by_group, strict=True)
        },
        held_out=judged.held,
        confidence=None,
        unique_records=unique,
        frontier=[],
        nodes_evaluated=0,
        search_complete=True,
        released=aligned.released,
        records=_records(aligned, fixed, judged),
        per_value=list(judged.protection),
        held_out_verdict=judged.verdict,
    )


def _pct(x: float) -> str:
    return f"{x:.1%}"


def check_words(found: ReleaseResult, fixed: FixedRelease, judged: Judged, name: str) -> str:
    """What the release means for one person. Met in-sample: the guarantee's words, as the
    audit's; broken in-sample: the beliefs the release really allows (the value whose belief
    grows most in its worst cell), then the held-out sentence."""
    if judged.breach_records == 0:
        return explain_release(found, name)
    ct = fixed.cells
    post = ct / np.maximum(ct.sum(1, keepdims=True), 1e-300)
    prior = ct.sum(0) / ct.sum()
    grow = post.max(0) - prior
    s = int(np.argmax(grow))
    value = "|".join(fixed.table.sensitive_values[s])
    rows = [r for r in found.per_value if r.get("attribute", name) == name]
    promised = explain_protection(rows, name, judged.epsilon, judged.disclosure)
    text = (
        f"The release does not keep what epsilon = {judged.epsilon:.3g} nats promises: in its "
        f"worst cell, an adversary's belief that the person's {name} is {value} grows from "
        f"{_pct(float(prior[s]))} (its share in the data) to {_pct(float(post[:, s].max()))}; "
        f"{judged.breach_records:,} of {len(fixed.record_cell):,} records are in cells that "
        f"break epsilon. (Promised: {promised})"
    )
    held = found.held_out
    if held is None:
        return text
    lo, hi = held.breach_probability_ci
    return text + (
        f" For people the release was not made from, an estimated {held.breach_probability:.1%} "
        f"(95 % interval {lo:.1%}-{hi:.1%}) fall in a released cell that breaks it."
    )


def check_details(aligned: Aligned, fixed: FixedRelease, judged: Judged) -> dict[str, Any]:
    """The ``check`` part of leakage.json for a row-aligned release."""
    n = len(aligned.original)
    listed = int(aligned.listed.sum())
    states = aligned.state_counts()
    return {
        "kind": "aligned",
        "key": aligned.key,
        "release_rows": aligned.release_rows,
        "records_not_listed": n - listed,
        "suppressed_records": int(aligned.suppressed.sum()),
        "perturbed_records": int(aligned.perturbed.sum()),
        "perturbed_share": float(aligned.perturbed.mean()) if n else 0.0,
        "perturbed_by_column": {c: v["perturbed"] for c, v in states.items()},
        "states_by_column": states,
        "cells": int(fixed.n_cells),
        "in_sample_breach_records": judged.breach_records,
        "held_out_meaning": (
            "the release was made elsewhere and cannot be refitted on held-out folds: the "
            "figure is the estimated share of the population whose released cell (these cells, "
            "fixed) breaks epsilon, from the audit's empirical-Bayes model of the original "
            "tuples (folds by row position choose its ridge and give the plug-in figures); "
            "tuples never seen are assumed released in the suppressed cell"
        ),
    }
