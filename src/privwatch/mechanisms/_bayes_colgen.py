"""Column generation for the Bayes-error LP when every location belongs to one user.

The restricted master keeps a set of outputs ``Z'`` (each with its ``t_z`` and its rows
``sum_w P(x, w) k[w, z] <= t_z``) and, inside them, only some (location, output) variables
``k[w, z]``. Minimisation form, scipy's dual signs: ``u_w`` the duals of the row sums,
``lam >= 0`` of the budget, ``mu[x, z] >= 0`` of the output rows.

* a variable ``k[w, z]`` of an output in the master prices out when
  ``P(w) (mu[x(w), z] + lam d(w, z)) - u_w < 0``;
* an output z outside the master improves it iff no ``mu >= 0, sum(mu) <= 1`` satisfies
  ``mu_x P(w) >= u_w - lam P(w) d(w, z)`` for its locations, i.e. iff
  ``score(z) = sum_x max(0, max_{w of x} (u_w / P(w) - lam d(w, z))) > 1``
  (one vectorised pass over every output).

The same scores give a dual-feasible point of the *full* LP after dividing ``(u, lam, mu)`` by
``rho = max(1, max_z score(z))``: a valid upper bound on the Bayes error at every iteration (the
optimality certificate).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.optimize import linprog

from ..exceptions import PrivwatchError

__all__ = ["ColumnGenerationResult", "column_generation", "solve_master"]

_CHUNK = 4096  # outputs priced at a time: keeps the (locations x chunk) buffer small


@dataclass(frozen=True)
class MasterSolution:
    """One master solve: ``k`` per variable (pair), duals and the budget slack."""

    k: NDArray[np.float64]
    objective: float
    u: NDArray[np.float64]
    lam: float
    mu: NDArray[np.float64]  # (n_x, n_outputs in the master)
    slack: float


def solve_master(
    p: NDArray[np.float64],
    d: NDArray[np.float64],
    budget: float,
    pair_w: NDArray[np.int64],
    pair_z: NDArray[np.int64],
    n_z: int,
    penalty: float | None,
) -> MasterSolution:
    """LP ``min sum_z t_z (+ penalty * s)`` over the variables ``k[pair_w[i], pair_z[i]]``.

    ``d`` holds the distances of the master's ``n_z`` outputs (columns); ``penalty=None`` solves
    the exact LP (no slack on the budget row). Every location needs at least one pair.
    """
    n_x, n_w = p.shape
    n_p = len(pair_w)
    extra = 0 if penalty is None else 1
    p_w = p.sum(axis=0)
    cost = np.concatenate([np.zeros(n_p), np.ones(n_z), [penalty] if penalty is not None else []])
    idx = np.arange(n_p)
    # output rows (x, z) -> x * n_z + z; a pair enters every row of its output with P(x, w)
    xs = np.repeat(np.arange(n_x), n_p)
    coef = p[xs, np.tile(pair_w, n_x)]
    keep = coef > 0
    a_pairs = sparse.csr_matrix(
        (coef[keep], ((xs * n_z + np.tile(pair_z, n_x))[keep], np.tile(idx, n_x)[keep])),
        shape=(n_x * n_z, n_p),
    )
    a_t = -sparse.vstack([sparse.identity(n_z)] * n_x)
    rows = sparse.hstack([a_pairs, a_t, sparse.csr_matrix((n_x * n_z, extra))])
    budget_row = sparse.csr_matrix(
        np.concatenate([p_w[pair_w] * d[pair_w, pair_z], np.zeros(n_z), -np.ones(extra)])[None, :]
    )
    a_ub = sparse.vstack([rows, budget_row]).tocsr()
    b_ub = np.concatenate([np.zeros(n_x * n_z), [budget]])
    a_eq = sparse.csr_matrix((np.ones(n_p), (pair_w, idx)), shape=(n_w, n_p + n_z + extra))
    res = linprog(
        cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(n_w), bounds=(0, None), method="highs"
    )
    if res.status != 0:
        raise PrivwatchError(f"the LP solver failed: {res.message}")
    marg = np.asarray(res.ineqlin.marginals, dtype=np.float64)
    return MasterSolution(
        np.clip(res.x[:n_p], 0.0, None),
        float(res.fun),
        np.asarray(res.eqlin.marginals, dtype=np.float64),
        float(-marg[-1]),
        -marg[:-1].reshape(n_x, n_z),
        float(res.x[-1]) if extra else 0.0,
    )


def _score(
    ratio: NDArray[np.float64],
    starts: NDArray[np.int64],
    d: NDArray[np.float64],
    lam: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``score(z)`` for every output and the per-user terms ``max(0, max_w ...)`` (n_x, n_z).

    Locations must be sorted by user; ``starts`` are the first location of each user.
    """
    n_z = d.shape[1]
    terms = np.empty((len(starts), n_z))
    for lo in range(0, n_z, _CHUNK):
        block = ratio[:, None] - lam * d[:, lo : lo + _CHUNK]
        terms[:, lo : lo + _CHUNK] = np.maximum(np.maximum.reduceat(block, starts, axis=0), 0.0)
    return terms.sum(axis=0), terms


@dataclass(frozen=True)
class ColumnGenerationResult:
    pair_w: NDArray[np.int64]
    pair_z: NDArray[np.int64]  # output indices into the full ``d``
    k: NDArray[np.float64]
    objective: float
    dual_objective: float
    n_iterations: int
    converged: bool = True


def _diverse_top(
    score: NDArray[np.float64], pattern: NDArray[np.int64], n: int
) -> NDArray[np.int64]:
    """Positions of up to ``n`` entries of ``score``: the best of every user pattern first, then
    the second best of every pattern, ... (neighbouring cells have near-equal scores; going
    round the patterns spreads the additions)."""
    order = np.argsort(-score, kind="stable")
    _, group = np.unique(pattern[order], return_inverse=True)
    sorter = np.argsort(group, kind="stable")  # groups contiguous, score order inside
    rank = np.empty(len(order), dtype=np.int64)
    rank[sorter] = np.arange(len(order)) - np.searchsorted(group[sorter], group[sorter])
    return np.asarray(order[np.lexsort((np.arange(len(order)), rank))[:n]], dtype=np.int64)


def _best_per_user(
    value: NDArray[np.float64], starts: NDArray[np.int64], m: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(location, column) of the ``m`` largest positive entries of every user block per column."""
    bounds = np.r_[starts, len(value)]
    w_out, j_out = [], []
    for lo, hi in itertools.pairwise(bounds):
        block = value[lo:hi]
        top = min(m, hi - lo)
        idx = np.argpartition(-block, top - 1, axis=0)[:top]
        vals = np.take_along_axis(block, idx, axis=0)
        r, c = np.nonzero(vals > 0)
        w_out.append(lo + idx[r, c])
        j_out.append(c)
    return np.concatenate(w_out), np.concatenate(j_out)


@dataclass
class _Master:
    """The working set of the restricted master: its outputs (indices into the full ``d``),
    its variables (``pair_w[i]``, position ``pair_z[i]`` in ``outputs``), how long each output
    has been idle, the big-M penalty on the budget slack, and the best dual point so far."""

    outputs: NDArray[np.int64]
    pair_w: NDArray[np.int64]
    pair_z: NDArray[np.int64]
    idle_for: NDArray[np.int64]
    penalty: float
    best_dual: float
    best_u: NDArray[np.float64]
    best_lam: float


@dataclass(frozen=True)
class _Pricing:
    """Outputs outside the master that price out (``cand``), with their scores and the dual
    point (``ratio = u / P(w)``, ``lam``) they were priced at."""

    cand: NDArray[np.int64]
    score: NDArray[np.float64]
    terms: NDArray[np.float64]
    ratio: NDArray[np.float64]
    lam: float


def _initial_master(
    p: NDArray[np.float64], d: NDArray[np.float64], budget: float, user: NDArray[np.int64]
) -> _Master:
    """Each user's medoid output and the global one; every location paired with the nearest of
    them. A big-M slack on the budget keeps every master feasible (raised if used)."""
    n_w = p.shape[1]
    p_w = p.sum(axis=0)
    start = {int(np.argmin(d[user == x].T @ p_w[user == x])) for x in np.unique(user)}
    start.add(int(np.argmin(d.T @ p_w)))
    outputs = np.array(sorted(start), dtype=np.int64)
    scale = float(np.median(d[d > 0])) if (d > 0).any() else 1.0
    return _Master(
        outputs=outputs,
        pair_w=np.arange(n_w),
        pair_z=d[:, outputs].argmin(axis=1),  # positions in ``outputs``
        idle_for=np.zeros(len(outputs), dtype=np.int64),
        penalty=10.0 / max(budget, 1e-3 * scale),
        best_dual=-np.inf,
        best_u=np.zeros(n_w),
        best_lam=0.0,
    )


def _price_outputs(
    m: _Master,
    sol: MasterSolution,
    p_w: NDArray[np.float64],
    starts: NDArray[np.int64],
    d: NDArray[np.float64],
    budget: float,
    *,
    tol: float,
    smoothing: float,
) -> _Pricing:
    """Price every output at the smoothed dual (Wentges), then at the master's own if the
    smoothed point prices nothing out; every point priced updates the best dual bound."""
    points = [(sol.u, sol.lam)]
    if np.isfinite(m.best_dual) and smoothing > 0:
        points.insert(
            0,
            (
                smoothing * m.best_u + (1 - smoothing) * sol.u,
                smoothing * m.best_lam + (1 - smoothing) * sol.lam,
            ),
        )
    for u, lam in points:
        ratio = u / p_w
        score, terms = _score(ratio, starts, d, lam)
        bound = (float(u.sum()) - lam * budget) / max(1.0, float(score.max()))
        if bound > m.best_dual:  # (u, lam, mu) / rho is dual feasible for the full LP
            m.best_dual, m.best_u, m.best_lam = bound, u, lam
        score[m.outputs] = -np.inf
        cand = np.flatnonzero(score > 1.0 + tol)
        if len(cand):
            break
    return _Pricing(cand, score, terms, ratio, lam)


def _negative_variables(
    m: _Master,
    sol: MasterSolution,
    p_w: NDArray[np.float64],
    user: NDArray[np.int64],
    d: NDArray[np.float64],
    tol: float,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """Reduced costs of the variables of outputs already in the master (at the master's duals)
    and the (location, position) pairs that price out."""
    rc = p_w[:, None] * (sol.mu[user] + sol.lam * d[:, m.outputs]) - sol.u[:, None]
    rc[m.pair_w, m.pair_z] = np.inf
    neg_w, neg_z = np.nonzero(rc < -tol)
    return rc, neg_w, neg_z


def _retire_idle(
    m: _Master,
    sol: MasterSolution,
    neg_w: NDArray[np.int64],
    neg_z: NDArray[np.int64],
    retire_after: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Retire the outputs idle for ``retire_after`` masters in a row (and their variables);
    every location keeps a variable. Returns the new variables renumbered to match."""
    used = np.bincount(m.pair_z[sol.k > 0], minlength=len(m.outputs)) > 0
    m.idle_for = np.where(used, 0, m.idle_for + 1)
    retire = m.idle_for >= retire_after
    keep_pair = ~retire[m.pair_z]
    keep_pair |= ~np.isin(m.pair_w, m.pair_w[keep_pair])
    if retire.any():
        retire = ~np.isin(np.arange(len(m.outputs)), m.pair_z[keep_pair])
        remap = np.cumsum(~retire) - 1
        m.pair_w, m.pair_z = m.pair_w[keep_pair], remap[m.pair_z[keep_pair]]
        neg_keep = ~retire[neg_z]
        neg_w, neg_z = neg_w[neg_keep], remap[neg_z[neg_keep]]
        m.outputs, m.idle_for = m.outputs[~retire], m.idle_for[~retire]
    return neg_w, neg_z


def _add_outputs(
    m: _Master,
    pricing: _Pricing,
    starts: NDArray[np.int64],
    d: NDArray[np.float64],
    *,
    batch: int,
    per_user: int,
) -> None:
    """Add up to ``batch`` priced-out outputs (spread over user patterns), each paired with the
    ``per_user`` locations of each user that want it most."""
    cand = pricing.cand
    bits = (pricing.terms[:, cand] > 0).astype(np.int64)
    pattern = bits.T @ (1 << np.arange(len(starts), dtype=np.int64))
    new = cand[_diverse_top(pricing.score[cand], pattern, batch)]
    positions = np.arange(len(m.outputs), len(m.outputs) + len(new))
    m.outputs = np.concatenate([m.outputs, new])
    m.idle_for = np.concatenate([m.idle_for, np.zeros(len(new), dtype=np.int64)])
    value = pricing.ratio[:, None] - pricing.lam * d[:, new]
    w_idx, j = _best_per_user(value, starts, per_user)
    m.pair_w = np.concatenate([m.pair_w, w_idx])
    m.pair_z = np.concatenate([m.pair_z, positions[j]])


def column_generation(
    p: NDArray[np.float64],
    d: NDArray[np.float64],
    budget: float,
    *,
    tol: float,
    gap_tol: float,
    max_iter: int,
    batch: int,
    per_user: int = 5,
    smoothing: float = 0.5,
    retire_after: int = 10,
    max_seconds: float | None = None,
    callback: Callable[[int, float, float, int], None] | None = None,
) -> ColumnGenerationResult:
    """Solve the Bayes-error LP by column generation. ``p`` has one user per location column,
    locations sorted by user, all with positive mass; ``budget`` is feasible over ``d``.

    Stops when no variable or output prices out, or when the certified gap (master objective
    minus the best dual bound) is at most ``gap_tol``. Outputs are priced at a smoothed dual
    (Wentges: ``smoothing`` times the best dual so far plus the rest times the master's), which
    damps the oscillation of the duals; when the smoothed point prices nothing out the master's
    own dual is priced instead. Each iteration: solve the master, price the outputs, price the
    variables, stop or retire idle outputs, add the new variables and outputs.
    """
    n_w = p.shape[1]
    user = p.argmax(axis=0)
    p_w = p.sum(axis=0)
    starts = np.flatnonzero(np.r_[True, user[1:] != user[:-1]])
    m = _initial_master(p, d, budget, user)
    t_start = time.perf_counter()
    for it in range(1, max_iter + 1):
        sol = solve_master(
            p, d[:, m.outputs], budget, m.pair_w, m.pair_z, len(m.outputs), m.penalty
        )
        pricing = _price_outputs(m, sol, p_w, starts, d, budget, tol=tol, smoothing=smoothing)
        if callback is not None:
            callback(it, sol.objective, m.best_dual, len(m.outputs))
        rc, neg_w, neg_z = _negative_variables(m, sol, p_w, user, d, tol)
        done = len(neg_w) == 0 and len(pricing.cand) == 0
        out_of_time = max_seconds is not None and time.perf_counter() - t_start > max_seconds
        if out_of_time and sol.slack <= 1e-9 and not done:
            return ColumnGenerationResult(
                m.pair_w, m.outputs[m.pair_z], sol.k, sol.objective, m.best_dual, it, False
            )
        if done or sol.objective - m.best_dual <= gap_tol:
            if sol.slack > 1e-9:  # the penalty was too small to force the budget: raise it
                m.penalty *= 100.0
                continue
            dual = sol.objective if done else m.best_dual
            return ColumnGenerationResult(
                m.pair_w, m.outputs[m.pair_z], sol.k, sol.objective, dual, it
            )
        # the most negative variables first (before retirement renumbers the outputs)
        if len(neg_w) > 20 * n_w:
            keep = np.argsort(rc[neg_w, neg_z])[: 20 * n_w]
            neg_w, neg_z = neg_w[keep], neg_z[keep]
        neg_w, neg_z = _retire_idle(m, sol, neg_w, neg_z, retire_after)
        m.pair_w = np.concatenate([m.pair_w, neg_w])
        m.pair_z = np.concatenate([m.pair_z, neg_z])
        if len(pricing.cand):
            _add_outputs(m, pricing, starts, d, batch=batch, per_user=per_user)
    raise PrivwatchError(
        f"column generation did not converge in {max_iter} iterations "
        f"(objective {sol.objective:.6g}, dual bound {m.best_dual:.6g}); raise `max_iter` or "
        "`gap_tol`."
    )
