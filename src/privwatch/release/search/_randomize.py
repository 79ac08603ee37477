r"""Randomization in place of the search's suppression (issue 41, item 1): the cells a
generalisation would release as ``*`` are released through an LP-chosen channel over those
cells instead of one ``*``.

Notation (Hsu et al.; Sadeghi et al.): S the sensitive value, X the observed tuple, Y the
release. The search's plan puts every tuple in a released cell (its labels at its levels) and
sends the suppressed ones to ``*``. Here the units are the released cells and, for a suppressed
tuple, the tuple itself (its finest labels: a suppressed cell of local recoding is at the top of
every hierarchy, and the finest units give the LP every grouping a coarser cell would); the
units holding suppressed tuples are released through
:func:`privwatch.mechanisms.lift_channel`: each goes to itself, to another such unit or to ``*``
with the probabilities :math:`k[u, y]` that maximise
:math:`\sum_u p(u) k[u, u]` (the probability that the released value is the true one), every
released symbol within the lift box

.. math:: e^{-\varepsilon} p(s) \le p(s \mid y) \le e^{\varepsilon} p(s) \quad \forall s

(upper face only with ``disclosure="positive"``), constraints linear in :math:`k`. The other
cells are released as the search releases them. Merging the suppressed units into ``*`` (the
search's own release, Sadeghi et al.'s X-invariant randomization) is one point of the LP's
polytope, so the LP keeps at least as much of the surrogate; whether it keeps more of

.. math:: I(X; Y) = H(Y) - \sum_x p(x) H(k[x, \cdot])

is measured, not assumed (for the generalisation, :math:`I(X; Y) = H(Y)`). Units whose labels
read ``*`` in every column share the ``*`` symbol (their columns are merged before any figure).

Held out: the in-sample channel is tight, so, as :mod:`privwatch.release.randomized` does, the
channel is solved in a box of :data:`SHARES` times epsilon, largest first, and judged by
:func:`privwatch.release.heldout.estimate_channel_breach` (the breach share of the whole release
drawn through this fixed channel, with its 95 % interval) and the verdict rule
(:func:`privwatch.release.heldout.not_met_reasons`); the first share whose verdict is met is
kept. The randomized release replaces the search's when it is met and keeps more
:math:`I(X; Y)` than the generalisation's :math:`H(Y)`, or when the search is not met;
otherwise the search's ``*`` stays (:attr:`SuppressionChannel.share` is None) and the reason is
recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import sparse

from ...exceptions import ValidationError
from ...mechanisms import LiftChannel, lift_channel
from ..cells import LiftBox, first_rows, group_rows
from ..heldout import HeldOut, estimate_channel_breach, held_out_verdict, not_met_reasons
from ..hierarchies import SUPPRESSED, as_text
from ..randomized import RandomizedMechanism, channel_weights, draw_symbols, symbols_as_frame
from ._global_recoding import Plan, ReleaseSpace
from ._options import SearchOptions

__all__ = [
    "SHARES",
    "SUPPRESSIONS",
    "SuppressionChannel",
    "check_suppression",
    "mutual_information",
    "randomize_suppression",
    "suppression_mechanism",
    "worst_log_lift",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: What the search does with the cells it suppresses: one ``*`` (the default), or randomize.
SUPPRESSIONS = ("star", "randomize")
#: Shares of epsilon the channel is solved at, tried in order until the held-out verdict is met.
SHARES = (1.0, 0.9, 0.8, 0.65, 0.5, 0.35, 0.2)


@dataclass
class SuppressionChannel:
    """The randomization of a search's suppressed cells (module docstring).

    ``share``: the share of epsilon the released channel was solved at (None: the search's
    ``*`` is released, ``why`` says why); ``channel``: the LP channel over the units (None when
    nothing was randomized); ``information_nats``: :math:`I(X; Y)` of what is released;
    ``star_information_nats``: :math:`H(Y)` of the generalisation with its ``*``;
    ``randomized_records``: records of the suppressed units; ``altered_records``: records
    drawn as another symbol than their own unit (the generalisation alters its suppressed
    records); ``tried``: every share's figures. ``weights`` (tuple rows x symbols; the last is
    ``*``), ``symbols`` (each symbol's labels), ``raw`` (each tuple row's observed values as
    text) and ``unit_of_row`` are what the saved mechanism is built from.
    """

    epsilon: float
    disclosure: str
    share: float | None
    why: str
    channel: LiftChannel | None
    information_nats: float
    star_information_nats: float
    randomized_records: int
    altered_records: int
    worst_log_lift_in_sample: float
    held_out: HeldOut | None
    verdict: str | None
    reasons: list[str]
    tried: list[dict[str, Any]]
    released: pd.DataFrame = field(repr=False)
    weights: sparse.csr_array = field(repr=False)
    symbols: pd.DataFrame = field(repr=False)
    raw: pd.DataFrame = field(repr=False)
    unit_of_row: IntArray = field(repr=False)

    @property
    def randomized(self) -> bool:
        """Whether the release drawn through the channel replaced the search's ``*``."""
        return self.share is not None

    def to_dict(self) -> dict[str, Any]:
        """The ``suppression`` part of leakage.json."""
        held = self.held_out
        return {
            "suppression": "randomize",
            "randomized": self.randomized,
            "why": self.why,
            "share_of_epsilon": self.share,
            "information_nats": self.information_nats,
            "star_information_nats": self.star_information_nats,
            "randomized_records": self.randomized_records,
            "altered_records": self.altered_records,
            "worst_log_lift_in_sample": self.worst_log_lift_in_sample,
            "breach_probability": None if held is None else held.breach_probability,
            "breach_probability_ci": None if held is None else list(held.breach_probability_ci),
            "verdict": self.verdict,
            "tried": self.tried,
        }


def check_suppression(suppression: str, useful: str | None) -> None:
    """Refuse an unknown ``suppression``, and ``randomize`` with a ``useful`` column (the channel
    keeps I(X; Y), not the mutual information with a column)."""
    if suppression not in SUPPRESSIONS:
        raise ValidationError(f"`suppression` must be one of {SUPPRESSIONS}; got {suppression!r}.")
    if suppression == "randomize" and useful is not None:
        raise ValidationError(
            "`suppression`='randomize' keeps I(X; Y) of the observed tuple; it cannot aim at a "
            f"`useful` column (got {useful!r}): leave one of them out."
        )


def randomize_suppression(
    space: ReleaseSpace,
    plan: Plan,
    options: SearchOptions,
    frame: pd.DataFrame,
    observed: list[str],
    row_of: IntArray,
    *,
    folds: int,
    tolerance: float,
    seed: int,
    star_held: HeldOut | None,
    star_reasons: list[str],
    protection: list[dict[str, Any]],
) -> SuppressionChannel:
    """The search's ``plan`` with its suppressed cells randomized (module docstring)."""
    table = space.table
    total = table.total()
    eps, disclosure = options.epsilon, options.disclosure
    suppressed = np.asarray(plan.suppressed, dtype=bool)
    finest = space.keys(np.zeros_like(plan.levels))
    sym_keys = np.where(suppressed[:, None], finest, space.keys(plan.levels, suppressed))
    unit_of_row, n_units = group_rows(sym_keys)
    unit_of_row = unit_of_row.astype(np.int64)
    unit_keys = sym_keys[first_rows(unit_of_row, n_units)]
    star_unit = np.all(unit_keys == np.asarray(space.star), axis=1)
    labels = space.labels(unit_keys)
    symbols = pd.DataFrame({c: labels[j] for j, c in enumerate(observed)})
    joint = np.zeros((n_units, total.shape[1]))
    np.add.at(joint, unit_of_row, total)
    flagged = np.zeros(n_units, dtype=bool)
    flagged[unit_of_row[suppressed & (total.sum(1) > 0)]] = True
    flagged |= star_unit & (joint.sum(1) > 0)
    merge = _merge_star(n_units, star_unit)
    px_rows = total.sum(1)
    star_w = _rows(_unit_weights(None, n_units, flagged) @ merge, unit_of_row)
    star_info = mutual_information(px_rows, star_w)
    box = LiftBox(total.sum(0), table.marginals(), eps, disclosure)
    rng = np.random.default_rng(seed)
    raw = _raw_tuples(frame, observed, row_of, len(total))
    n_rand = int(np.rint(total[suppressed].sum()))
    record_unit = unit_of_row[row_of]
    tried: list[dict[str, Any]] = []
    chosen: tuple[float, LiftChannel, sparse.csr_array, float, float, HeldOut | None] | None
    chosen = None
    if flagged.any():
        p = joint.T / joint.sum()
        for share in SHARES:
            try:
                ch = lift_channel(p, flagged, share * eps, disclosure)
            except ValidationError:
                tried.append({"share_of_epsilon": share, "feasible": False})
                continue
            w = _rows(_unit_weights(ch, n_units, flagged) @ merge, unit_of_row)
            info = mutual_information(px_rows, w)
            worst = worst_log_lift(total, w, disclosure)
            held = (
                estimate_channel_breach(table, box, w, n_units, rng=np.random.default_rng(seed))
                if folds >= 2
                else None
            )
            reasons = not_met_reasons(options, info, held, tolerance, protection)
            tried.append(_tried(share, info, held, reasons, worst))
            if not reasons and worst <= eps + 1e-9:
                chosen = (share, ch, w, info, worst, held)
                break
    if chosen is not None and (star_reasons or chosen[3] > star_info + 1e-12):
        share, ch, w, info, worst, held = chosen
        drawn = draw_symbols(ch, record_unit, rng)
        drawn = np.where((drawn >= 0) & star_unit[np.maximum(drawn, 0)], -1, drawn)
        return SuppressionChannel(
            eps, disclosure, share, _why_random(share, info, star_info, star_reasons), ch,
            info, star_info, n_rand, int((drawn != record_unit).sum()), worst, held,
            held_out_verdict(held, tolerance), [], tried,
            _released(drawn, symbols), w, symbols, raw, unit_of_row,
        )  # fmt: skip
    drawn = np.where(flagged[record_unit], -1, record_unit)
    worst = worst_log_lift(total, star_w, disclosure)
    return SuppressionChannel(
        eps, disclosure, None, _why_star(bool(flagged.any()), chosen is not None, tried), None,
        star_info, star_info, n_rand, n_rand, worst, star_held,
        held_out_verdict(star_held, tolerance), list(star_reasons), tried,
        _released(drawn, symbols), star_w, symbols, raw, unit_of_row,
    )  # fmt: skip


def _unit_weights(ch: LiftChannel | None, n_units: int, flagged: np.ndarray) -> sparse.csr_array:
    """``w[unit, symbol]`` (symbols: the units, then ``*``): the channel's rows for its inputs,
    or (``ch`` None) the flagged units merged into ``*``; every other unit to itself."""
    if ch is not None:
        return channel_weights(ch, n_units)[0]
    col = np.where(flagged, n_units, np.arange(n_units))
    return sparse.csr_array(
        (np.ones(n_units), (np.arange(n_units), col)), shape=(n_units, n_units + 1)
    )


def _merge_star(n_units: int, star_unit: np.ndarray) -> sparse.csr_array:
    """The symbol map that sends the own symbol of a unit labelled ``*`` everywhere to ``*``."""
    col = np.append(np.where(star_unit, n_units, np.arange(n_units)), n_units)
    return sparse.csr_array(
        (np.ones(n_units + 1), (np.arange(n_units + 1), col)), shape=(n_units + 1, n_units + 1)
    )


def _rows(w_units: sparse.csr_array, unit_of_row: IntArray) -> sparse.csr_array:
    """The tuple rows' weights: each row takes its unit's."""
    pick = sparse.csr_array(
        (np.ones(len(unit_of_row)), (np.arange(len(unit_of_row)), unit_of_row)),
        shape=(len(unit_of_row), w_units.shape[0]),
    )
    return sparse.csr_array(pick @ w_units)


def mutual_information(px: FloatArray, w: sparse.csr_array) -> float:
    r""":math:`I(X; Y) = H(Y) - \sum_x p(x) H(w[x, \cdot])` in nats, ``px`` the tuples'
    masses (any scale) and ``w`` their rows over the symbols."""
    p = np.asarray(px, dtype=float)
    p = p / p.sum()
    q = np.asarray(w.T @ p, dtype=float)
    h_y = -float(np.sum(q[q > 0] * np.log(q[q > 0])))
    coo = sparse.coo_array(w)
    v = coo.data
    live = v > 0
    h_cond = -float(np.sum(p[coo.row[live]] * v[live] * np.log(v[live])))
    return h_y - h_cond


def worst_log_lift(counts: FloatArray, w: sparse.csr_array, disclosure: str) -> float:
    """The worst log-lift of a released symbol (exact, in-sample): ``counts[row, s]``."""
    mass = np.asarray((w.T @ counts), dtype=float)  # (symbols, s)
    size = mass.sum(1)
    live = size > 0
    ps = counts.sum(0) / counts.sum()
    with np.errstate(divide="ignore"):
        lift = np.log(mass[live] / size[live, None]) - np.log(ps)
    lift = np.abs(lift) if disclosure == "both" else lift
    return float(lift.max()) if lift.size else 0.0


def _raw_tuples(frame: pd.DataFrame, observed: list[str], row_of: IntArray, n: int) -> pd.DataFrame:
    """Each tuple row's observed values as text (its first record's)."""
    first = first_rows(np.asarray(row_of, dtype=np.int64), n)
    part = frame[observed].iloc[first]
    return pd.DataFrame({c: as_text(part[c]).to_numpy() for c in observed})


def _released(drawn: IntArray, symbols: pd.DataFrame) -> pd.DataFrame:
    """Each record's released labels (input order) from its symbol (-1: ``*``)."""
    return symbols_as_frame(drawn, symbols).reset_index(drop=True)


def _tried(
    share: float, info: float, held: HeldOut | None, reasons: list[str], worst: float
) -> dict[str, Any]:
    return {
        "share_of_epsilon": share,
        "feasible": True,
        "information_nats": info,
        "worst_log_lift_in_sample": worst,
        "breach_probability": None if held is None else held.breach_probability,
        "breach_probability_ci": None if held is None else list(held.breach_probability_ci),
        "met": not reasons,
    }


def _why_random(share: float, info: float, star: float, star_reasons: list[str]) -> str:
    base = (
        f"the channel solved at {share:g} x epsilon is met on held-out records and keeps "
        f"I(X; Y) = {info:.3f} nats"
    )
    if star_reasons:
        return base + " where the generalisation with '*' is not met"
    return base + f", more than the generalisation's H(Y) = {star:.3f} nats"


def _why_star(any_suppressed: bool, met: bool, tried: list[dict[str, Any]]) -> str:
    if not any_suppressed:
        return "the search suppresses no record: nothing to randomize"
    if met:
        return "the channel that is met keeps no more I(X; Y) than the generalisation's '*'"
    return (
        f"no channel of the {len(tried)} tried (shares of epsilon "
        f"{', '.join(format(t['share_of_epsilon'], 'g') for t in tried)}) is met on held-out "
        "records: the search's '*' is released"
    )


def suppression_mechanism(
    sc: SuppressionChannel,
    *,
    sensitive: str,
    status: str,
    bins: dict[str, Any] | None = None,
    input_name: str | None = None,
    input_sha256: str | None = None,
) -> RandomizedMechanism:
    """The release as a saved :class:`~privwatch.release.randomized.RandomizedMechanism`: its
    tuples are the audited tuples (as text) and the released cells' labels; every tuple not
    released as itself is an input whose row is its generalisation (one symbol) or the
    channel (``apply`` draws it with a seed); a tuple never seen goes to ``*``."""
    observed = list(sc.raw.columns)
    tuples = [list(map(str, r)) for r in sc.raw.itertuples(index=False)]
    pos = {tuple(t): i for i, t in enumerate(tuples)}
    n_units = len(sc.symbols)
    star_symbol = [SUPPRESSED] * len(observed)
    out_of = np.full(n_units + 1, -1, dtype=np.int64)
    for u, r in enumerate(sc.symbols.itertuples(index=False)):
        t = list(map(str, r))
        if t == star_symbol:
            continue
        key = tuple(t)
        if key not in pos:
            pos[key] = len(tuples)
            tuples.append(t)
        out_of[u] = pos[key]
    w = sparse.csr_array(sc.weights)
    rows = np.arange(len(sc.raw))
    nnz = np.diff(w.indptr)
    first_col = w.indices[np.minimum(w.indptr[:-1], max(len(w.indices) - 1, 0))]
    as_self = (nnz == 1) & (out_of[first_col] == rows)
    inputs = rows[~as_self & (nnz > 0)]
    sub = sparse.csr_array(w[inputs])
    used = np.unique(sub.indices)
    channel = sub[:, used].toarray() if len(inputs) else np.zeros((0, 0))
    return RandomizedMechanism(
        observed, tuples, inputs.tolist(), out_of[used].tolist(), channel, sensitive=sensitive,
        epsilon=sc.epsilon, disclosure=sc.disclosure, status=status, bins=bins,
        input_name=input_name, input_sha256=input_sha256,
    )  # fmt: skip
