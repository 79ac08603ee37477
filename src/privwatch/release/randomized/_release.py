r"""A randomized release of records: the flagged tuples through the LP channel, aimed at the
held-out verdict.

The records are counted into their observed tuples (a :class:`~privwatch.release.cells.
CountTable`, folds by row position as the audit's); the plug-in joint ``p[s, x]`` flags the
tuples whose log-lift breaks epsilon (two-sided, or above epsilon with ``disclosure``
``"positive"``), and :func:`privwatch.mechanisms.lift_channel` randomizes them among themselves
and ``*``: every released symbol meets epsilon exactly on the records. That in-sample channel
is tight (its symbols sit on the box's edge), so, as the search does with its credible margins,
the release is aimed at the held-out verdict: for each step of :data:`CHANNEL_MARGINS` (a share f of
epsilon and a level q), the tuples flagged are those whose plug-in log-lift exceeds f epsilon
or whose held-out posterior breaks epsilon with probability above q
(:func:`privwatch.release.heldout.tuple_breach`), and the channel is solved in the box of f
epsilon; the first step whose held-out verdict is met is released (the last one tried if none
is). The held-out figure is :func:`privwatch.release.heldout.estimate_channel_breach`: the
share of the population in a released symbol that breaks epsilon, for this fixed channel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import sparse

from ...engines import fold_of
from ...mechanisms import LiftChannel, lift_channel, lift_channel_refuses
from ..cells import CountTable, LiftBox, first_rows, group_rows, table_protection
from ..heldout import (
    NOTHING_KEPT,
    TOLERANCE,
    HeldOut,
    estimate_channel_breach,
    held_out_verdict,
    not_met_reasons,
    tuple_breach,
)
from ..hierarchies import SUPPRESSED, as_text

__all__ = [
    "CHANNEL_MARGINS",
    "RandomizedRelease",
    "channel_weights",
    "count_tuples",
    "draw_symbols",
    "randomize_release",
    "symbols_as_frame",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: (share of epsilon the channel is solved at, held-out breach level above which a tuple is
#: flagged), tried in order until the held-out verdict is met.
CHANNEL_MARGINS = (
    (1.0, 1.0),
    (0.9, 0.3),
    (0.8, 0.15),
    (0.65, 0.08),
    (0.5, 0.04),
    (0.35, 0.02),
    (0.2, 0.01),
)


@dataclass(frozen=True)
class _Request:
    """What the verdict rule reads of the request (:class:`~..heldout.Request`)."""

    epsilon: float
    disclosure: str
    max_suppressed: float = 1.0


@dataclass
class RandomizedRelease:
    """A randomized release and its verdict (module docstring).

    ``tuples``: the distinct observed tuples as text (one row per row of ``table``);
    ``channel``: the LP channel (its ``inputs`` and ``outputs`` index ``tuples``; output -1 is
    ``*``); ``record_tuple``: each record's tuple row; ``released``: the drawn release (observed
    columns, one row per record); ``margin``: the (share of epsilon, level) released;
    ``information_nats``: I(X; Y) of the channel on the records' tuples;
    ``merge_information_nats``: that of merging the same flagged set into ``*`` (None when the
    merge breaks epsilon); ``altered_records``: records released as another symbol than their
    own tuple (drawn); ``held_out`` and ``verdict``: the held-out check (None without folds).
    """

    sensitive: list[str]
    observed: list[str]
    epsilon: float
    disclosure: str
    table: CountTable
    tuples: pd.DataFrame
    channel: LiftChannel
    record_tuple: IntArray
    released: pd.DataFrame
    margin: tuple[float, float]
    information_nats: float
    information_input_nats: float
    merge_information_nats: float | None
    flagged_records: int
    altered_records: int
    held_out: HeldOut | None
    verdict: str | None
    reasons: list[str]
    per_value: list[dict[str, object]] = field(default_factory=list)
    tolerance: float = TOLERANCE

    @property
    def satisfied(self) -> bool:
        return not self.reasons

    @property
    def n_records(self) -> int:
        return len(self.record_tuple)

    def summary(self) -> dict[str, object]:
        """The figures, as plain values (leakage.json, benchmarks)."""
        held = self.held_out
        return {
            "epsilon": self.epsilon,
            "disclosure": self.disclosure,
            "margin": list(self.margin),
            "solved_epsilon": self.channel.epsilon,
            "flagged_tuples": len(self.channel.flagged),
            "flagged_records": self.flagged_records,
            "altered_records": self.altered_records,
            "information_nats": self.information_nats,
            "information_input_nats": self.information_input_nats,
            "merge_information_nats": self.merge_information_nats,
            "beats_merge": self.channel.beats_merge,
            "objective": self.channel.objective,
            "worst_log_lift_in_sample": self.channel.worst_log_lift,
            "breach_probability": None if held is None else held.breach_probability,
            "breach_probability_ci": None if held is None else list(held.breach_probability_ci),
            "verdict": self.verdict,
            "met": self.satisfied,
        }


def count_tuples(
    frame: pd.DataFrame, sensitive: list[str], observed: list[str], folds: int, seed: int
) -> tuple[CountTable, IntArray, pd.DataFrame]:
    """The records' count table (rows: distinct observed tuples as text; folds by row position
    as the audit's), each record's row, and the tuples' values as text."""
    text = pd.DataFrame({c: as_text(frame[c]).to_numpy() for c in observed})
    codes = np.stack([pd.factorize(text[c])[0] for c in observed], axis=1)
    row_of, n_rows = group_rows(codes)
    first = first_rows(row_of, n_rows)
    sens = frame[sensitive].astype(str)
    s_codes, s_uniques = pd.factorize(pd.MultiIndex.from_frame(sens), sort=True)
    n = len(frame)
    fold = fold_of(np.arange(n), folds, seed) if folds >= 2 else np.zeros(n, dtype=np.int64)
    counts = np.zeros((n_rows, len(s_uniques), max(folds, 1)))
    np.add.at(counts, (row_of, s_codes, np.asarray(fold, dtype=np.int64)), 1.0)
    table = CountTable(
        tuple(observed), tuple(sensitive), codes[first].astype(np.int64), counts,
        [tuple(str(x) for x in v) for v in s_uniques],
    )  # fmt: skip
    return table, row_of.astype(np.int64), text.iloc[first].reset_index(drop=True)


def channel_weights(channel: LiftChannel, n_rows: int) -> tuple[sparse.csr_array, int]:
    """``w[tuple row, symbol]`` of the whole release (symbols: every tuple, then ``*``)."""
    star = n_rows
    rows = np.arange(n_rows)
    keep = np.ones(n_rows, dtype=bool)
    keep[channel.inputs] = False
    r = [rows[keep]]
    c = [rows[keep]]
    v = [np.ones(int(keep.sum()))]
    ii, jj = np.nonzero(channel.channel)
    out = channel.outputs[jj]
    r.append(channel.inputs[ii])
    c.append(np.where(out < 0, star, out))
    v.append(channel.channel[ii, jj])
    w = sparse.csr_array(
        (np.concatenate(v), (np.concatenate(r), np.concatenate(c))), shape=(n_rows, n_rows + 1)
    )
    return w, star


def draw_symbols(channel: LiftChannel, tuple_of: IntArray, rng: np.random.Generator) -> IntArray:
    """A released symbol per record (its tuple row; -1 for ``*``): records of an input tuple
    drawn from its channel row, the others their own tuple."""
    out = np.asarray(tuple_of, dtype=np.int64).copy()
    pos = {int(x): i for i, x in enumerate(channel.inputs)}
    idx = np.array([pos.get(int(t), -1) for t in tuple_of], dtype=np.int64)
    hit = np.flatnonzero(idx >= 0)
    if len(hit):
        cum = np.cumsum(channel.channel[idx[hit]], axis=1)
        u = rng.random(len(hit))[:, None] * cum[:, -1:]
        j = np.minimum((u >= cum).sum(1), cum.shape[1] - 1)
        out[hit] = channel.outputs[j]
    return out


def symbols_as_frame(symbols: IntArray, tuples: pd.DataFrame) -> pd.DataFrame:
    """Released observed columns of each record from its symbol (-1: ``*`` everywhere)."""
    star = symbols < 0
    frame = tuples.iloc[np.where(star, 0, symbols)].reset_index(drop=True).copy()
    frame.loc[star, :] = SUPPRESSED
    return frame


def randomize_release(
    frame: pd.DataFrame,
    sensitive: str | list[str],
    observed: list[str],
    epsilon: float,
    *,
    disclosure: str = "both",
    folds: int = 5,
    seed: int = 0,
    tolerance: float = TOLERANCE,
) -> RandomizedRelease:
    """The randomized release of ``frame`` at ``epsilon`` (module docstring)."""
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    table, tuple_of, tuples = count_tuples(frame, sens, list(observed), folds, seed)
    total = table.total()
    joint = total.T / total.sum()
    box = LiftBox(total.sum(0), table.marginals(), epsilon, disclosure)
    lift = _tuple_log_lift(joint, disclosure)
    held_ok = folds >= 2
    # every margin flags at least the tuples above the first one's lift (the first one's
    # breach level is 1, which no tuple's probability exceeds): when the LP refuses that set,
    # it refuses at every margin, so it is refused before the held-out model is fitted
    first = (lift > CHANNEL_MARGINS[0][0] * epsilon + 1e-12) & (joint.sum(0) > 0)
    if held_ok and lift_channel_refuses(int(first.sum())):
        lift_channel(joint, first, CHANNEL_MARGINS[0][0] * epsilon, disclosure)  # raises
    p_tuple = tuple_breach(table, box) if held_ok else np.zeros(len(total))
    protection = table_protection(table, epsilon, disclosure)
    n_in = float(total.sum())
    info_in = _entropy(total.sum(1) / n_in)
    best: RandomizedRelease | None = None
    for share, level in CHANNEL_MARGINS if held_ok else CHANNEL_MARGINS[:1]:
        flagged = (lift > share * epsilon + 1e-12) | (p_tuple > level)
        ch = lift_channel(joint, flagged, share * epsilon, disclosure)
        held = None
        if held_ok:
            w, star = channel_weights(ch, len(total))
            held = estimate_channel_breach(table, box, w, star, rng=np.random.default_rng(seed))
        reasons = not_met_reasons(
            _Request(epsilon, disclosure), ch.information_nats, held, tolerance, protection
        )
        best = _release(
            frame, sens, list(observed), epsilon, disclosure, table, tuples, ch, tuple_of,
            (share, level), info_in, held, reasons, protection, tolerance, seed,
        )  # fmt: skip
        if (
            held_out_verdict(held, tolerance) in ("met", None)
            or ch.information_nats <= NOTHING_KEPT
        ):
            break
    assert best is not None
    return best


def _release(
    frame: pd.DataFrame,
    sens: list[str],
    observed: list[str],
    epsilon: float,
    disclosure: str,
    table: CountTable,
    tuples: pd.DataFrame,
    ch: LiftChannel,
    tuple_of: IntArray,
    margin: tuple[float, float],
    info_in: float,
    held: HeldOut | None,
    reasons: list[str],
    protection: list[dict[str, object]],
    tolerance: float,
    seed: int,
) -> RandomizedRelease:
    symbols = draw_symbols(ch, tuple_of, np.random.default_rng(seed))
    released = symbols_as_frame(symbols, tuples)
    released.index = frame.index
    flagged = np.isin(tuple_of, ch.flagged)
    return RandomizedRelease(
        sens, observed, float(epsilon), disclosure, table, tuples, ch, tuple_of, released,
        margin, ch.information_nats, info_in, ch.merge_information_nats, int(flagged.sum()),
        int((symbols != tuple_of).sum()), held, held_out_verdict(held, tolerance), reasons,
        protection, tolerance,
    )  # fmt: skip


def _tuple_log_lift(joint: FloatArray, disclosure: str) -> FloatArray:
    """Each tuple's worst plug-in log-lift (|.| two-sided; +inf where a value is ruled out)."""
    ps = joint.sum(1)
    px = joint.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = np.log(joint / np.where(px > 0, px, 1.0)) - np.log(ps)[:, None]
    lift = np.abs(lift) if disclosure == "both" else lift
    lift = np.where(np.isnan(lift), -np.inf, lift)
    return np.asarray(lift.max(0), dtype=float)


def _entropy(p: FloatArray) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())
