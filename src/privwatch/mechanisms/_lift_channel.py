r"""The randomization of a flagged set that keeps the most, under epsilon-lift privacy (an LP).

Notation (Hsu et al.; Sadeghi et al.): S the sensitive value, X the observed tuple, Y the
release. The tuples of a flagged set F are released through a channel :math:`k[x, y]` whose
outputs are the flagged tuples themselves and one marker ``*``; every other tuple is released as
it is. Each released symbol :math:`y \in F \cup \{*\}` must keep the lift within the box

.. math::

    e^{-\varepsilon} p(s) \;\le\; p(s \mid y) \;\le\; e^{\varepsilon} p(s)
    \quad\text{for every } s,

(``disclosure="positive"``: the upper face only). With :math:`p(s \mid y) =
\sum_x p(s, x) k[x, y] / \sum_x p(x) k[x, y]`, each face is *linear* in the channel:

.. math::

    \sum_{x \in F} k[x, y]\,\bigl(p(s, x) - e^{\varepsilon} p(s) p(x)\bigr) \le 0, \qquad
    \sum_{x \in F} k[x, y]\,\bigl(e^{-\varepsilon} p(s) p(x) - p(s, x)\bigr) \le 0.

The objective is the probability that a flagged record is released as its own tuple,
:math:`\max_k \sum_{x \in F} p(x)\, k[x, x]`, a linear surrogate of :math:`I(X; Y)` (which is
convex in the channel, so its maximum over the polytope is hard). Merging F into ``*``
(:math:`k[x, *] = 1`, the X-invariant randomization of Sadeghi et al. Cor. 1) is feasible
exactly when the merged cell meets epsilon, and has objective 0: the LP keeps at least as much
of the surrogate. Whether it keeps more :math:`I(X; Y)` is what :attr:`LiftChannel.beats_merge`
reports (the question Sadeghi et al. leave open). When even the merge breaks epsilon, the
unflagged tuples may also be sent to ``*`` (the safe symbols the search adds to its suppressed
cell); their own symbols stay as they are.

Solved with HiGHS (:func:`scipy.optimize.linprog`), for at most :data:`MAX_TUPLES` tuples
(a larger LP is refused with the reason, not left to run for hours). Beyond
:data:`MAX_DENSE` flagged tuples, each tuple may go to itself, ``*`` and the :data:`PARTNERS`
flagged tuples whose lift deviates most in the opposite direction (the symbols it can
balance); the result is then a feasible channel, optimal on that support.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.optimize import linprog

from ..exceptions import ValidationError

__all__ = [
    "MAX_DENSE",
    "PARTNERS",
    "LiftChannel",
    "lift_channel",
    "release_information",
    "symbol_log_lift",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Most flagged tuples whose channel may send each one to every other.
MAX_DENSE = 400
#: Beyond MAX_DENSE: flagged symbols each flagged tuple may be sent to, besides itself and ``*``.
PARTNERS = 40
#: Most tuples (flagged, plus the unflagged ones that may join ``*``) one LP takes. HiGHS's time
#: grows faster than the square of it (census-like tables, 2 cores: 3,857 flagged tuples 1.6 s,
#: 7,362 11.8 s, 25,189 unfinished after 4 minutes); beyond it the LP is refused with the reason.
MAX_TUPLES = 10_000
#: The box the LP is solved in is this much (nats) inside epsilon, so that the solver's
#: feasibility tolerance cannot put a symbol outside the box it is checked against.
INNER = 1e-7


@dataclass(frozen=True)
class LiftChannel:
    """The channel of :func:`lift_channel` (see the module docstring).

    ``inputs``: the tuples (columns of the joint) released at random, flagged first;
    ``outputs``: the symbols, tuples (columns of the joint) then ``-1`` for ``*``;
    ``channel``: ``k[inputs, outputs]``, rows summing to 1; ``flagged``: the flagged tuples;
    ``objective``: :math:`\\sum_x p(x) k[x, x]` over the inputs; ``worst_log_lift``: the worst
    log-lift of a released symbol of the channel (exact, on the joint it was solved for);
    ``information_nats`` and ``merge_information_nats``: :math:`I(X; Y)` of the release and of
    the flagged set merged into ``*``; ``merge_feasible``: whether the merge meets epsilon;
    ``moved_unflagged``: unflagged tuples that may be sent to ``*`` (only where the merge does
    not meet epsilon); ``support``: ``"dense"`` or ``"partners"``.
    """

    epsilon: float
    disclosure: str
    flagged: IntArray
    inputs: IntArray
    outputs: IntArray
    channel: FloatArray
    objective: float
    worst_log_lift: float
    information_nats: float
    merge_information_nats: float | None
    merge_feasible: bool
    moved_unflagged: int
    support: str

    @property
    def beats_merge(self) -> bool | None:
        """Whether the release keeps more :math:`I(X; Y)` than the merge (None: the merge
        breaks epsilon)."""
        if self.merge_information_nats is None:
            return None
        return self.information_nats > self.merge_information_nats + 1e-12

    def altered_share(self, px: FloatArray) -> float:
        """The expected share of records released as another symbol than their own tuple."""
        diag = _diagonal(self)
        return float((px[self.inputs] * (1.0 - diag)).sum() / px.sum())

    def to_dict(self) -> dict[str, object]:
        return {
            "epsilon": self.epsilon,
            "disclosure": self.disclosure,
            "flagged_tuples": len(self.flagged),
            "objective": self.objective,
            "worst_log_lift": self.worst_log_lift,
            "information_nats": self.information_nats,
            "merge_information_nats": self.merge_information_nats,
            "merge_feasible": self.merge_feasible,
            "beats_merge": self.beats_merge,
            "moved_unflagged": self.moved_unflagged,
            "support": self.support,
        }


def _diagonal(ch: LiftChannel) -> FloatArray:
    """k[x, x] of each input (0 where its own tuple is not an output)."""
    col = {int(o): j for j, o in enumerate(ch.outputs)}
    out = np.zeros(len(ch.inputs))
    for i, x in enumerate(ch.inputs):
        j = col.get(int(x))
        if j is not None:
            out[i] = ch.channel[i, j]
    return out


def _box(joint: FloatArray, epsilon: float, disclosure: str) -> tuple[FloatArray, FloatArray]:
    ps = joint.sum(1)
    hi = np.exp(epsilon) * ps
    lo = np.exp(-epsilon) * ps if disclosure == "both" else np.zeros_like(ps)
    return lo, hi


def symbol_log_lift(
    joint: FloatArray, inputs: IntArray, channel: FloatArray, disclosure: str
) -> FloatArray:
    """The worst log-lift of every output symbol of ``channel`` (rows: ``inputs`` of the joint);
    NaN for a symbol that receives no mass."""
    ps = joint.sum(1)
    mass = joint[:, inputs] @ channel  # (s, outputs)
    total = mass.sum(0)
    live = total > 0
    post = np.where(live, mass / np.where(live, total, 1.0), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = np.log(post) - np.log(ps)[:, None]
    lift = np.abs(lift) if disclosure == "both" else lift
    return np.where(live, np.nanmax(np.where(np.isnan(lift), -np.inf, lift), axis=0), np.nan)


def release_information(px: FloatArray, inputs: IntArray, channel: FloatArray) -> float:
    """:math:`I(X; Y)` in nats of a release: ``inputs`` through ``channel``, every other tuple
    as itself (its own symbol). The output symbols of the channel are new symbols, distinct
    from the tuples released as themselves."""
    px = np.asarray(px, dtype=float) / float(np.sum(px))
    rest = np.ones(len(px), dtype=bool)
    rest[inputs] = False
    q = np.concatenate([px[rest], px[inputs] @ channel])
    h_y = -float(np.sum(q[q > 0] * np.log(q[q > 0])))
    k = channel[channel > 0]
    rows = np.broadcast_to(px[inputs][:, None], channel.shape)[channel > 0]
    return h_y + float(np.sum(rows * k * np.log(k)))


def _allowed(joint: FloatArray, flagged: IntArray) -> list[IntArray]:
    """Per flagged tuple, the outputs it may be sent to (indices into flagged; ``m`` is ``*``)."""
    m = len(flagged)
    if m <= MAX_DENSE:
        return [np.arange(m + 1)] * m
    ps = joint.sum(1)
    post = joint[:, flagged] / joint[:, flagged].sum(0)
    dev = (post / ps[:, None] - 1.0).T  # (m, s)
    dev /= np.maximum(np.linalg.norm(dev, axis=1, keepdims=True), 1e-12)
    out = []
    for start in range(0, m, 512):
        score = dev[start : start + 512] @ dev.T
        near = np.argpartition(score, PARTNERS, axis=1)[:, :PARTNERS]
        for r, row in enumerate(near):
            i = start + r
            out.append(np.unique(np.concatenate([row, [i, m]])))
    return out


def _solve(
    joint: FloatArray,
    flagged: IntArray,
    extra: IntArray,
    bounds: tuple[FloatArray, FloatArray],
) -> tuple[FloatArray, IntArray, IntArray, float] | None:
    """One LP: flagged tuples to their allowed outputs, ``extra`` (unflagged) tuples to
    themselves or ``*``. Returns (channel, inputs, outputs, objective) or None if infeasible."""
    m = len(flagged)
    if m + len(extra) > MAX_TUPLES:
        raise ValidationError(
            f"the randomization's LP would take {m + len(extra):,} tuples ({m:,} flagged), more "
            f"than the {MAX_TUPLES:,} it is solved for in reasonable time; generalise first (the "
            "search) or merge the flagged set (the watchdog)"
        )
    px = joint.sum(0)
    scale = float(px[flagged].max())
    lo, hi = bounds
    allowed = _allowed(joint, flagged)
    rows, cols = [], []
    for i, outs in enumerate(allowed):
        rows.append(np.full(len(outs), i))
        cols.append(outs)
    # extra tuple u: variable "keep" (objective only, no constraint) and "to *"
    e = len(extra)
    rows.append(np.repeat(np.arange(m, m + e), 2))
    cols.append(np.tile([-2, m], e))  # -2: the tuple's own symbol, never constrained
    r_idx, c_idx = np.concatenate(rows), np.concatenate(cols)
    n_var = len(r_idx)
    inputs = np.concatenate([flagged, extra]).astype(np.int64)
    q = px[inputs] / scale
    pq = joint[:, inputs] / scale  # (s, inputs)
    cost = np.zeros(n_var)
    own = (c_idx == -2) | ((r_idx < m) & (c_idx == r_idx))
    cost[own] = -q[r_idx[own]]
    faces = [(pq - hi[:, None] * q[None, :], hi < 1.0)]
    if np.any(lo > 0):
        faces.append((lo[:, None] * q[None, :] - pq, lo > 0))
    a_rows, a_cols, a_vals = [], [], []
    n_out, n_s = m + 1, joint.shape[0]
    constrained = c_idx >= 0
    v_idx = np.flatnonzero(constrained)
    row_base = 0
    for coef, active in faces:
        for s in np.flatnonzero(active):
            a_rows.append(row_base + s * n_out + c_idx[v_idx])
            a_cols.append(v_idx)
            a_vals.append(coef[s, r_idx[v_idx]])
        row_base += n_s * n_out
    a_ub = sparse.csr_array(
        (np.concatenate(a_vals), (np.concatenate(a_rows), np.concatenate(a_cols))),
        shape=(row_base, n_var),
    )
    a_eq = sparse.csr_array((np.ones(n_var), (r_idx, np.arange(n_var))), shape=(m + e, n_var))
    res = linprog(
        cost, A_ub=a_ub, b_ub=np.zeros(row_base), A_eq=a_eq, b_eq=np.ones(m + e),
        bounds=(0, 1), method="highs",
    )  # fmt: skip
    if res.status != 0:
        return None
    x = np.clip(res.x, 0.0, 1.0)
    x[x < 1e-10] = 0.0
    # outputs: the flagged tuples, the extra tuples' own symbols, then *
    outputs = np.concatenate([flagged, extra, [-1]]).astype(np.int64)
    out_col = np.where(c_idx == -2, r_idx, np.where(c_idx == m, m + e, c_idx))
    channel = np.zeros((m + e, m + e + 1))
    np.add.at(channel, (r_idx, out_col), x)
    channel /= channel.sum(1, keepdims=True)
    used = channel.sum(0) > 0
    used[-1] = True
    return channel[:, used], inputs, outputs[used], 0.0


def lift_channel(
    joint: FloatArray, flagged: np.ndarray, epsilon: float, disclosure: str = "both"
) -> LiftChannel:
    """The channel of the flagged tuples that keeps the most of them released as themselves,
    every released symbol within epsilon-lift privacy (module docstring).

    ``joint``: ``p[s, x]`` (rows sensitive, columns observed tuples); ``flagged``: a boolean
    mask of the columns (or their indices).

    Examples
    --------
    >>> p = np.array([[0.30, 0.10, 0.05], [0.10, 0.15, 0.30]])
    >>> ch = lift_channel(p, np.array([True, False, True]), 0.5)
    >>> bool(ch.worst_log_lift <= 0.5 + 1e-9), ch.objective > 0
    (True, True)
    """
    p = np.asarray(joint, dtype=float)
    if p.ndim != 2 or np.any(p < 0) or not np.isfinite(p).all() or p.sum() <= 0:
        raise ValidationError(f"`joint` must be a non-negative 2-d pmf; got shape {p.shape}.")
    if disclosure not in ("both", "positive"):
        raise ValidationError(f"`disclosure` must be 'both' or 'positive'; got {disclosure!r}.")
    p = p / p.sum()
    mask = np.asarray(flagged)
    flag = np.flatnonzero(mask) if mask.dtype == bool else np.unique(mask.astype(np.int64))
    flag = flag[p[:, flag].sum(0) > 0].astype(np.int64)
    px = p.sum(0)
    lo, hi = _box(p, epsilon, disclosure)
    star_mass = p[:, flag].sum(1)
    merge_ok = bool(len(flag)) and _inside(star_mass, lo, hi, epsilon)
    empty = np.zeros(0, dtype=np.int64)
    if not len(flag):
        ch = np.zeros((0, 1))
        return _result(p, epsilon, disclosure, flag, empty, np.array([-1]), ch, True, 0)
    box = _box(p, max(epsilon - INNER, 0.0), disclosure)
    solved = _solve(p, flag, empty, box)
    moved = 0
    if solved is None:  # even the merge breaks epsilon: safe tuples may join '*'
        rest = np.flatnonzero((px > 0) & ~np.isin(np.arange(len(px)), flag)).astype(np.int64)
        solved = _solve(p, flag, rest, box)
        moved = len(rest)
        if solved is None:
            raise ValidationError(
                f"no randomization of the flagged set meets epsilon {epsilon:g}; got an "
                "infeasible program (the solver's tolerance is above the box)"
            )
    channel, inputs, outputs, _ = solved
    return _result(p, epsilon, disclosure, flag, inputs, outputs, channel, merge_ok, moved)


def lift_channel_refuses(n_flagged: int) -> bool:
    """Whether :func:`lift_channel` refuses a flagged set of ``n_flagged`` tuples with
    probability mass (its first LP already takes more than :data:`MAX_TUPLES`), so that a
    caller can skip work done only for the channel."""
    return n_flagged > MAX_TUPLES


def _inside(mass: FloatArray, lo: FloatArray, hi: FloatArray, epsilon: float) -> bool:
    post = mass / mass.sum()
    ps = hi / np.exp(epsilon)
    tol = np.exp(1e-12)
    return bool(np.all(post <= hi * tol + 1e-15) and np.all(post * tol >= lo - 1e-15 * ps))


def _result(
    p: FloatArray,
    epsilon: float,
    disclosure: str,
    flag: IntArray,
    inputs: IntArray,
    outputs: IntArray,
    channel: FloatArray,
    merge_ok: bool,
    moved: int,
) -> LiftChannel:
    px = p.sum(0)
    lifts = symbol_log_lift(p, inputs, channel, disclosure) if len(inputs) else np.zeros(1)
    worst = float(np.nanmax(lifts)) if np.isfinite(lifts).any() else 0.0
    merge = None
    if merge_ok:
        merge = release_information(px, flag, np.ones((len(flag), 1)))
    ch = LiftChannel(
        float(epsilon), disclosure, flag, inputs, outputs, channel, 0.0, worst,
        release_information(px, inputs, channel) if len(inputs) else _entropy(px),
        merge, merge_ok, moved, "dense" if len(flag) <= MAX_DENSE else "partners",
    )  # fmt: skip
    diag = _diagonal(ch)
    object.__setattr__(ch, "objective", float((px[inputs] * diag).sum()))
    return ch


def _entropy(px: FloatArray) -> float:
    q = px[px > 0] / px.sum()
    return float(-(q * np.log(q)).sum())
