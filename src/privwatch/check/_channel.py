r"""A randomized release judged against the channel it was drawn from (``check --mechanism``).

A release drawn through a saved channel (``privwatch apply M.json DATA --seed N``) is judged on
the **mechanism**, not on the realised draw. The saved mechanism is a
:class:`~privwatch.release.randomized.RandomizedMechanism` (kind ``RandomizedChannel``) or a
:class:`~privwatch.release.Generalisation` (a deterministic map, judged the same way); both are
read as ``w[input, symbol]``: rows the fitted tuples then one row for a tuple never seen (or
with a missing value), columns the released symbols (tuples, and ``*``).

1. **Consistency.** Every record's released tuple must be a symbol the channel can emit from
   the record's original tuple (``w > 0``); a record the release does not list is inconsistent
   too (the channel releases every record). Otherwise the check stops, naming how many are not.
2. **In-sample, exact.** The original's count table ``n[x, s]`` (numeric columns binned as the
   mechanism says) through the channel: each symbol's counts :math:`\sum_x w[x, y] n[x, s]`,
   its log-lift against the records' ``p(s)``; a symbol outside the lift box is a reason the
   release is not met (the expected number of records in such symbols is reported).
3. **Held-out.** :func:`privwatch.release.heldout.estimate_channel_breach` on the same table
   with the channel: the population share in a released symbol that breaks epsilon and its
   95 % interval, MET iff the upper end is within ``held_out_tolerance``
   (:func:`~privwatch.release.heldout.not_met_reasons`, the one verdict rule), with per-value
   protection.
4. **Information.** :math:`I(X; Y)` in nats of the channel on the original's ``p(x)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from ..audit import AuditSpec, file_sha256, release_leakage
from ..exceptions import TamperedFileError, ValidationError
from ..preprocessing import bin_columns
from ..release import SUPPRESSED, Generalisation, LiftBox
from ..release.cells import table_protection
from ..release.heldout import (
    NOTHING_KEPT,
    estimate_channel_breach,
    held_out_verdict,
    not_met_reasons,
)
from ..release.randomized import RANDOMIZED_KIND, RandomizedMechanism, count_tuples
from ..release.search import SearchOptions
from ._align import Aligned, align

__all__ = ["CHANNEL_ROUTE_REASON", "ChannelJudged", "SavedChannel", "channel_audit", "load_channel"]

CHANNEL_ROUTE_REASON = (
    "a release drawn through a saved mechanism, judged against that mechanism on the original "
    "it was drawn from (privwatch check --mechanism): both tables in memory"
)
_SEP = "\x1f"


@dataclass(frozen=True)
class SavedChannel:
    """A saved mechanism as a channel (module docstring): ``weights[input, symbol]``."""

    kind: str
    name: str | None
    sha256: str | None
    observed: list[str]
    sensitive: str
    epsilon: float
    disclosure: str
    status: str
    bins: dict[str, Any]
    symbols: list[tuple[str, ...]]
    star: int
    weights: sparse.csr_array
    flagged: np.ndarray  # per input row: randomized (a channel input) or not released as itself
    codes: Callable[[pd.DataFrame], np.ndarray]  # input row of each record (unseen: the last)


def _saved_kind(path: Path) -> str | None:
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    kind = doc.get("kind") if isinstance(doc, dict) else None
    return kind if isinstance(kind, str) else None


def _of_randomized(m: RandomizedMechanism, path: Path | None) -> SavedChannel:
    t, k = len(m.tuples), len(m.observed)
    rows, cols, vals = [np.arange(t + 1)], [np.arange(t + 1)], [np.ones(t + 1)]
    keep = np.ones(t + 1, dtype=bool)
    keep[m.inputs] = False
    rows, cols, vals = [rows[0][keep]], [cols[0][keep]], [vals[0][keep]]
    ii, jj = np.nonzero(m.channel)
    rows.append(m.inputs[ii])
    cols.append(np.where(m.outputs[jj] < 0, t, m.outputs[jj]))
    vals.append(m.channel[ii, jj])
    w = sparse.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(t + 1, t + 1)
    )

    def codes(df: pd.DataFrame) -> np.ndarray:
        c = m.encode(df)
        return np.where(c < 0, t, c)

    symbols = [tuple(r) for r in m.tuples] + [(SUPPRESSED,) * k]
    return SavedChannel(
        RANDOMIZED_KIND, None if path is None else path.name,
        None if path is None else file_sha256(path), list(m.observed), m.sensitive, m.epsilon,
        m.disclosure, m.status, dict(m.bins), symbols, t, w, ~keep, codes,
    )  # fmt: skip


def _of_generalisation(g: Generalisation, path: Path | None) -> SavedChannel:
    symbols = [tuple(str(v) for v in t) for t in g.output_tuples]
    star = symbols.index((SUPPRESSED,) * len(g.observed))
    changed = [[str(v) for v in a] != [str(v) for v in b]
               for a, b in zip(g.tuples, g.released, strict=True)]  # fmt: skip
    return SavedChannel(
        Generalisation.__name__, None if path is None else path.name,
        None if path is None else file_sha256(path), list(g.observed), g.sensitive, g.epsilon,
        g.disclosure, g.status, dict(g.bins or {}), symbols, star,
        sparse.csr_array(g.channel()), np.array([*changed, False]), g.encode,
    )  # fmt: skip


def load_channel(mechanism: Any) -> SavedChannel:
    """The saved mechanism (a path, a :class:`RandomizedMechanism` or a
    :class:`Generalisation`) as a channel; a tampered file is refused by the checked format."""
    if isinstance(mechanism, RandomizedMechanism):
        return _of_randomized(mechanism, None)
    if isinstance(mechanism, Generalisation):
        return _of_generalisation(mechanism, None)
    if not isinstance(mechanism, (str, Path)):
        raise ValidationError(
            "`mechanism` must be a saved mechanism file (privwatch audit --save-mechanism); got "
            f"{type(mechanism).__name__}."
        )
    path = Path(mechanism)
    if not path.is_file():
        raise ValidationError(f"`mechanism` must be a saved mechanism file; got {str(path)!r}.")
    kind = _saved_kind(path)
    if kind is not None and kind not in (RANDOMIZED_KIND, Generalisation.__name__):
        raise ValidationError(
            f"`mechanism` must hold a saved {RANDOMIZED_KIND} or {Generalisation.__name__}; "
            f"{path.name} holds a saved {kind[:40]!r}."
        )
    try:
        if kind == RANDOMIZED_KIND:
            return _of_randomized(RandomizedMechanism.load(path), path)
        return _of_generalisation(Generalisation.load(path), path)
    except TamperedFileError as exc:  # the file reader names its `path`: here the mechanism
        raise TamperedFileError(str(exc).replace("`path`", "`mechanism`", 1)) from None


def _symbols_of(released: pd.DataFrame, saved: SavedChannel) -> np.ndarray:
    """Each record's released symbol (-1: a tuple the mechanism never releases)."""
    index: dict[str, int] = {}
    for i, t in enumerate(saved.symbols):
        index.setdefault(_SEP.join(t), i)
    keys = released[saved.observed].astype(str).agg(_SEP.join, axis=1)
    return np.array([index.get(k, -1) for k in keys], dtype=np.int64)


def _consistent(codes: np.ndarray, symbols: np.ndarray, listed: np.ndarray,
                saved: SavedChannel) -> None:  # fmt: skip
    w = sparse.coo_array(saved.weights)
    width = w.shape[1]
    allowed = np.asarray(w.row, dtype=np.int64) * width + np.asarray(w.col, dtype=np.int64)
    ok = listed & (symbols >= 0) & np.isin(codes * width + symbols, allowed[w.data > 0])
    bad = np.flatnonzero(~ok)
    if len(bad):
        n = len(codes)
        raise ValidationError(
            f"the release is not consistent with the mechanism: {len(bad):,} of {n:,} records "
            f"({len(bad) / n:.1%}; {int((~listed).sum()):,} not listed) are released as a tuple "
            f"the channel cannot emit from their original tuple (first: record {int(bad[0])}); "
            "was it drawn from this mechanism (privwatch apply) from this original?"
        )


def _information(px: np.ndarray, w: sparse.csr_array) -> float:
    """I(X; Y) in nats of channel ``w`` (rows: tuples) on ``p(x)``."""
    py = np.asarray(w.T @ px, dtype=float)
    c = sparse.coo_array(w)
    keep = c.data > 0
    r, col, k = c.row[keep], c.col[keep], c.data[keep]
    return float(np.sum(px[r] * k * np.log(k / py[col])))


def _entropy(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


@dataclass(frozen=True)
class ChannelJudged:
    """The release judged against its channel: the aligned tables (the original's observed
    columns binned as the mechanism), the ``leakage.json`` sections it decides, the ``check``
    part and the per-record scores."""

    aligned: Aligned
    observed: list[str]
    epsilon: float
    leakage: dict[str, Any]
    utility: dict[str, Any]
    details: dict[str, Any]
    scores: pd.DataFrame


@dataclass(frozen=True)
class _Counted:
    binned: pd.DataFrame  # the original, observed columns binned as the mechanism
    table: Any  # CountTable
    row_of: np.ndarray  # table row of each record
    w: sparse.csr_array  # table row x symbol
    own: np.ndarray  # each table row's own symbol (-1: none)
    flagged: np.ndarray  # each table row: randomized / not released as itself


def _count(original: pd.DataFrame, sens: list[str], saved: SavedChannel, codes: np.ndarray,
           spec: AuditSpec) -> _Counted:  # fmt: skip
    obs = saved.observed
    binned = original[[*sens, *obs]].reset_index(drop=True)
    if saved.bins:
        binned[obs] = bin_columns(binned[obs], saved.bins)
    table, row_of, tuples = count_tuples(binned, sens, obs, spec.folds, spec.seed)
    first = np.unique(row_of, return_index=True)[1]
    w = sparse.csr_array(saved.weights[codes[first]])
    own = _symbols_of(tuples, saved)
    return _Counted(binned, table, row_of, w, own, saved.flagged[codes[first]])


def _merge_information(px: np.ndarray, c: _Counted, box: LiftBox,
                       epsilon: float) -> tuple[int, float | None]:  # fmt: skip
    """(flagged tuples of the table, I(X; Y) of merging them into ``*`` instead; None when the
    merge breaks epsilon)."""
    flagged = c.flagged
    total = c.table.total()
    star = total[flagged].sum(0)[None]
    if not flagged.any() or float(box.worst(star)[0]) > epsilon + 1e-12:
        return int(flagged.sum()), None
    n = len(px)
    sym = np.where(flagged, n, np.arange(n))
    merged = sparse.csr_array((np.ones(n), (np.arange(n), sym)), shape=(n, n + 1))
    return int(flagged.sum()), _information(px, merged)


def _in_words(held: Any, breaking: float, worst: float, epsilon: float, name: str) -> str:
    text = (
        f"The release was drawn through a saved channel; judged on the channel, not on the draw: "
        f"on the original records every released symbol's belief about {name} stays within "
        f"epsilon = {epsilon:.3g} nats (worst log-lift {worst:.3g})"
        if breaking < 0.5
        else f"On the original records, {breaking:,.1f} records are expected in released symbols "
        f"that break epsilon = {epsilon:.3g} nats (worst log-lift {worst:.3g})"
    )
    if held is None:
        return text + "; it was not checked on held-out records."
    lo, hi = held.breach_probability_ci
    return text + (
        f"; for the population, an estimated {held.breach_probability:.1%} (95 % interval "
        f"{lo:.1%}-{hi:.1%}) fall in a released symbol that breaks it."
    )


def channel_audit(spec: AuditSpec, original: pd.DataFrame, release: pd.DataFrame,
                  key: str | None, saved: SavedChannel) -> ChannelJudged:  # fmt: skip
    """The release judged against ``saved`` (module docstring)."""
    sens = list(spec.sensitive or ())
    obs = saved.observed
    if spec.observed is not None and sorted(spec.observed) != sorted(obs):
        raise ValidationError(
            f"`observed` must be the mechanism's observed columns {obs}; got {list(spec.observed)}."
        )
    missing = [c for c in [*sens, *obs] if c not in original.columns]
    if missing:
        raise ValidationError(
            f"the original must have the mechanism's observed and the sensitive columns; "
            f"missing {missing}."
        )
    epsilon = saved.epsilon if spec.epsilon is None else float(spec.epsilon)
    disclosure = spec.disclosure
    codes = saved.codes(original.reset_index(drop=True))
    c = _count(original, sens, saved, codes, spec)
    aligned = align(c.binned, release, sens, obs, key)
    symbols = _symbols_of(aligned.released, saved)
    _consistent(codes, symbols, aligned.listed, saved)
    total = c.table.total()
    n = float(total.sum())
    box = LiftBox(total.sum(0), c.table.marginals(), epsilon, disclosure)
    cells = np.asarray(c.w.T @ total, dtype=float)
    live = cells.sum(1) > 0
    worst = np.full(len(cells), np.nan)
    worst[live] = box.worst(cells[live])
    breaking = float(cells[live].sum(1)[worst[live] > epsilon + 1e-12].sum())
    px = total.sum(1) / n
    info, info_in = _information(px, c.w), _entropy(px)
    held = (
        estimate_channel_breach(c.table, box, c.w, saved.star, rng=np.random.default_rng(spec.seed))
        if spec.folds >= 2 and info > NOTHING_KEPT
        else None
    )
    protection = table_protection(c.table, epsilon, disclosure)
    request = SearchOptions(epsilon=epsilon, disclosure=disclosure, max_suppressed=1.0)
    reasons = not_met_reasons(request, info, held, spec.held_out_tolerance, protection)
    if info <= NOTHING_KEPT:
        reasons[0] = "the channel keeps no information: every record is released as '*'"
    top = float(np.nanmax(worst)) if live.any() else 0.0
    if breaking >= 0.5:
        reasons.insert(
            0,
            f"on the original records themselves, the channel puts {breaking:,.1f} of {n:,.0f} "
            f"records (expected) in released symbols that break epsilon {epsilon:g} (worst "
            f"log-lift {top:.3g} nats)",
        )
    flagged_tuples, merge_info = _merge_information(px, c, box, epsilon)
    name = "+".join(sens)
    own_sym = c.own[c.row_of]
    altered = int((symbols != own_sym).sum())
    star_records = int((symbols == saved.star).sum())
    verdict = held_out_verdict(held, spec.held_out_tolerance)
    flagged_rows = c.flagged
    flagged_records = int(flagged_rows[c.row_of].sum())
    release_part = {
        "method": "randomized" if saved.kind == RANDOMIZED_KIND else "generalisation",
        "generalisation": {col: 0 for col in obs},
        "suppressed_records": star_records,
        "n_records": int(n),
        "perturbed_records": altered,
        "epsilon": epsilon,
        "disclosure": disclosure,
        "flagged_tuples": flagged_tuples,
        "flagged_records": flagged_records,
        "altered_records": altered,
        "information_nats": info,
        "information_input_nats": info_in,
        "merge_information_nats": merge_info,
        "worst_log_lift_in_sample": top,
        "breach_probability": None if held is None else held.breach_probability,
        "breach_probability_ci": None if held is None else list(held.breach_probability_ci),
    }
    joint = c.binned[sens].astype(str).agg("|".join, axis=1).rename(name)
    leakage: dict[str, Any] = {
        "status": "not_met" if reasons else "met",
        "reasons": reasons,
        "guarantee": {
            "epsilon": epsilon, "disclosure": disclosure, "per_value": protection,
            "max_log_lift_in_sample": top,
            "scope": "released symbols of the saved channel, on the original records (exact)",
        },
        "guarantee_in_words": _in_words(held, breaking, top, epsilon, name),
        "release": release_part,
        "held_out": None if held is None else {**held.to_dict(), "verdict": verdict},
        "after": release_leakage(joint, aligned.released).to_dict(),
    }  # fmt: skip
    utility = {
        "utility_mi": info, "entropy_observed": info_in,
        "nmil": 1.0 - info / max(info_in, 1e-300),
        "flagged_probability": flagged_records / max(n, 1.0),
        "information_nats": info, "information_input_nats": info_in,
    }  # fmt: skip
    details = {
        "kind": "mechanism",
        "key": key,
        "release_rows": aligned.release_rows,
        "mechanism_kind": saved.kind,
        "mechanism_name": saved.name,
        "mechanism_sha256": saved.sha256,
        "mechanism_epsilon": saved.epsilon,
        "mechanism_status": saved.status,
        "consistent_records": int(n),
        "symbols": int(live.sum()),
        "in_sample_breach_records": breaking,
        "information_nats": info,
        "held_out_meaning": (
            "the share of the population whose released symbol breaks epsilon when records are "
            "released through this fixed channel (tuples' posteriors from the audit's "
            "empirical-Bayes model of the original's count table, symbols their channel-weighted "
            "mixtures); the realised draw does not enter the figure"
        ),
    }
    risk = np.zeros(len(c.own))
    tuple_live = total.sum(1) > 0
    risk[tuple_live] = box.worst(total[tuple_live])
    scores = pd.DataFrame({
        "risk": risk[c.row_of], "flagged": flagged_rows[c.row_of],
        "randomized": symbols != own_sym,
        "released_symbol_log_lift": worst[symbols],
    })  # fmt: skip
    return ChannelJudged(aligned, obs, epsilon, leakage, utility, details, scores)
