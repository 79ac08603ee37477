r"""Every leakage measure of a nested family of merged releases, in one pass over the columns.

A watchdog release at threshold epsilon keeps the observed symbols of risk at most epsilon and
merges the others into one symbol; over a sorted grid of thresholds the kept sets are nested.
Every measure of :func:`~privwatch.measures.leakage_report` is a function of sums (or maxima)
over the release's columns of a term that depends on the column and the sensitive marginal
only, plus the merged column's term:

.. math:: I(S;Y) = \sum_{y} \sum_s p(s, y) \log \frac{p(s, y)}{p(s) p(y)}, \qquad
          I_f = \sum_y p(y) \sum_s p(s) f(l(s, y)), \qquad
          P_c = \sum_y \max_s p(s, y), \qquad
          \mathcal{L} = \log \sum_y \max_s p(y|s),

Sibson's and Arimoto's orders (Hsu et al. eq. (6)-(8)) likewise, and the lift and local-DP
epsilons are maxima over columns. The sensitive marginal p(s) is the same for every release
(merging columns keeps the row sums). So with the columns ranked once, each term is computed
once per column, and the report of the release keeping the first k ranked columns is the sum of
the first k terms plus the term of the sum of the others; per-threshold work is O(|S|) plus the
merged column.

Rounding: the masses (each release's merged column and the sensitive marginal) are summed
exactly rounded (:func:`math.fsum`), so a release's columns and its marginal agree to the last
bit, and the terms are summed pairwise over the column ranges between consecutive kept counts,
then exactly. The reports are within ~1e-15 (absolute, nats or probability) of a long-double
evaluation; :func:`leakage_report` of the same release, whose summed merged column carries tens
of units in the last place on 10^5 columns, is within ~3e-13. The two differ by that much, not
bit for bit. A lift above 1e300 (marginals below ~1e-150) or an overflowing term makes the
reports fall back to :func:`leakage_report` of each release, whose log-domain paths handle it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlogy

from .._validation import DEFAULT_ATOL, check_alpha, check_pmf
from ..exceptions import ValidationError
from ._alpha import _NEAR_ONE, _log_mean_power, _scaled_power_sum
from ._common import FloatArray, safe
from ._fdiv import F_FUNCTIONS
from ._report import LeakageReport, leakage_report

__all__ = ["nested_leakage_reports"]

#: Column sums (added over the kept columns and the merged one) and column maxima / minima.
_SUMS = ("mi", "kl", "chi2", "tv", "hellinger", "max_cond", "sibson", "arimoto", "guess")
_MAXIMA = ("lift_hi", "ldp", "lift_zero", "ldp_zero")
_MINIMA = ("lift_lo",)
#: Lifts above this (or a term that overflows) fall back to the per-release report, whose
#: log-domain paths handle them.
_LIFT_LIMIT = 1e300


def _terms(cols: FloatArray, p_s: FloatArray, a: float) -> dict[str, FloatArray]:
    """Per column y of ``cols[s, y]`` (a block of the normalised joint): each measure's term,
    computed as :func:`leakage_report` computes it for that column."""
    rows = p_s > 0
    p_y = cols.sum(axis=0)
    live = p_y > 0
    lift = cols / safe(p_y)[None, :]
    lift /= safe(p_s)[:, None]
    out: dict[str, FloatArray] = {}
    logs = np.log(lift, out=np.zeros_like(lift), where=lift > 0)
    out["mi"] = (cols * logs).sum(axis=0)
    inside = lift[rows]
    out["lift_hi"] = np.where(live, inside.max(axis=0), -np.inf)
    out["lift_lo"] = np.where(live, inside.min(axis=0), np.inf)
    out["lift_zero"] = np.where(live & (out["lift_lo"] <= 0), 1.0, 0.0)
    for name, gen in F_FUNCTIONS.items():
        out[name] = (p_s[rows] @ gen(inside)) * np.where(live, p_y, 0.0)
    cond = cols[rows] / p_s[rows, None]
    hi, lo = cond.max(axis=0), cond.min(axis=0)
    out["max_cond"] = hi
    used = hi > 0
    out["ldp"] = np.where(used & (lo > 0), np.log(np.where(used, hi, 1.0)) - np.log(lo), 0.0)
    out["ldp_zero"] = np.where(used & (lo <= 0), 1.0, 0.0)
    out["guess"] = cols.max(axis=0)
    if a == 1.0 or math.isinf(a):
        out["sibson"] = out["arimoto"] = np.zeros(cols.shape[1])
    elif abs(a - 1.0) <= _NEAR_ONE:
        b = a - 1.0
        post = np.zeros_like(cols)
        post[:, live] = cols[:, live] / p_y[live]
        full_cond = np.zeros_like(cols)
        full_cond[rows] = cond
        px = np.where(live, p_y, 0.0)
        v = (_log_mean_power(post, full_cond, b) - b * np.log(safe(p_y))) / a
        w = _log_mean_power(post, post, b) / a
        out["sibson"] = np.where(live, px * np.expm1(v), 0.0)
        out["arimoto"] = np.where(live, px * np.expm1(w), 0.0)
    else:
        out["sibson"] = _scaled_power_sum(cond, p_s[rows], a)
        out["arimoto"] = _scaled_power_sum(cols, np.ones(cols.shape[0]), a)
    return out


def _report(t: dict[str, float], p_s: FloatArray, a: float) -> LeakageReport:
    """The report from the summed and maximised terms of a release's columns."""
    mi = max(0.0, t["mi"])
    max_leak = max(0.0, math.log(t["max_cond"]))
    if a == 1.0:
        sibson = arimoto = mi
    elif math.isinf(a):
        sibson = max_leak
        arimoto = max(0.0, math.log(t["guess"] / float(p_s.max())))
    elif abs(a - 1.0) <= _NEAR_ONE:
        b = a - 1.0
        sibson = max(0.0, a / b * math.log1p(t["sibson"]))
        den = float(_log_mean_power(p_s[:, None], p_s[:, None], b, axis=0)[0]) / a
        arimoto = max(0.0, a / b * (math.log1p(t["arimoto"]) - den))
    else:
        sibson = max(0.0, a / (a - 1.0) * math.log(t["sibson"]))
        den = float(_scaled_power_sum(p_s[:, None], np.ones(p_s.size), a)[0])
        arimoto = max(0.0, a / (a - 1.0) * math.log(t["arimoto"] / den))
    if t["lift_zero"] > 0 or t["lift_lo"] <= 0:
        lift_eps = math.inf
    else:
        lift_eps = max(math.log(t["lift_hi"]), -math.log(t["lift_lo"]))
    ldp = math.inf if t["ldp_zero"] > 0 else max(0.0, t["ldp"])
    guessing = min(1.0, t["guess"])
    return LeakageReport(
        base=None,
        alpha=a,
        entropy_sensitive=max(0.0, -float(xlogy(p_s, p_s).sum())),
        mutual_information=mi,
        lift_epsilon=lift_eps,
        sibson_mi=sibson,
        arimoto_mi=arimoto,
        maximal_leakage=max_leak,
        kl_information=max(0.0, t["kl"]),
        chi2_information=max(0.0, t["chi2"]),
        tv_information=max(0.0, t["tv"]),
        hellinger_information=max(0.0, t["hellinger"]),
        guessing_probability=guessing,
        prior_guessing_probability=float(np.max(p_s)),
        bayes_error=max(0.0, 1.0 - guessing),
        bayes_leakage=max(0.0, math.log(t["guess"] / float(p_s.max()))),
        ldp_epsilon=ldp,
    )


def _kept_counts(kept: ArrayLike, n: int) -> NDArray[np.int64]:
    raw = np.asarray(kept)
    if raw.ndim != 1 or raw.dtype.kind not in "iu":
        raise ValidationError(f"`kept` must be a vector of integers; got {raw.dtype} {raw.shape}.")
    k = raw.astype(np.int64)
    if k.size and (k.min() < 0 or k.max() > n):
        raise ValidationError(f"`kept` must hold counts in [0, {n}]; got {k.min()}..{k.max()}.")
    return k


def _order(order: ArrayLike, n: int) -> NDArray[np.intp]:
    raw = np.asarray(order)
    if (
        raw.shape != (n,)
        or raw.dtype.kind not in "iu"
        or not np.array_equal(np.sort(raw), np.arange(n))
    ):
        raise ValidationError(f"`order` must be a permutation of the {n} columns.")
    return raw.astype(np.intp)


def nested_leakage_reports(
    p: ArrayLike,
    order: ArrayLike,
    kept: ArrayLike,
    *,
    alpha: float = 2.0,
    atol: float = DEFAULT_ATOL,
) -> list[LeakageReport]:
    r"""Leakage reports of the merged releases of ``p[s, x]`` that keep the first ``kept[i]``
    columns of ``order`` and merge the others into one symbol (none when nothing is left).

    Report i equals :func:`leakage_report` of that release (the watchdog's merged release,
    Hsu et al. eq. (9) with an :math:`\mathcal{X}^c`-invariant randomization) up to rounding,
    but every column's terms are computed once (see the module docstring), so a curve of many
    thresholds costs about one report.

    Examples
    --------
    >>> p = [[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]]  # keep column 2 (the rest merged), keep all
    >>> [round(r.mutual_information, 6) for r in nested_leakage_reports(p, [2, 0, 1], [1, 3])]
    [0.0, 0.10465]
    """
    arr = check_pmf(p, atol=atol)
    a = check_alpha(alpha)
    n = arr.shape[1]
    rank = _order(order, n)
    counts = _kept_counts(kept, n)
    raw = arr[:, rank]
    steps = [int(k) for k in np.unique(counts)]
    bounds = sorted({0, n, *steps})  # the column ranges between consecutive kept counts
    spans = list(itertools.pairwise(bounds))
    # masses exactly rounded (math.fsum): each release's sensitive marginal is then the same
    # p_s as its columns' sums to about one unit in the last place
    mass = [[math.fsum(row[lo:hi].tolist()) for lo, hi in spans] for row in raw]
    row_mass = np.array([math.fsum(m) for m in mass])
    total = math.fsum(row_mass.tolist())
    ranked, p_s = raw / total, row_mass / total
    at = {b: i for i, b in enumerate(bounds)}
    merged = {k: np.array([[math.fsum(m[at[k] :]) / total] for m in mass]) for k in steps if k < n}
    # an overflowing lift gives inf / NaN terms here; such tables take the fallback below
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        terms = _terms(ranked, p_s, a)
        merged_terms = {k: _terms(m, p_s, a) for k, m in merged.items()}
    if not all(_in_range(t) for t in (terms, *merged_terms.values())):
        return _one_by_one(arr, rank, counts, a)
    by_count: dict[int, LeakageReport] = {}
    parts: dict[str, list[float]] = {name: [] for name in (*_SUMS, *_MAXIMA, *_MINIMA)}
    done = 0  # spans added to ``parts``: those below the kept count k (a bound)
    for k in steps:
        for lo, hi in spans[done : at[k]]:
            for name in _SUMS:
                parts[name].append(float(terms[name][lo:hi].sum()))
            for name in _MAXIMA:
                parts[name].append(float(terms[name][lo:hi].max()))
            for name in _MINIMA:
                parts[name].append(float(terms[name][lo:hi].min()))
        done = at[k]
        last = {name: [float(v[0])] for name, v in merged_terms[k].items()} if k < n else {}
        found = {name: math.fsum(parts[name] + last.get(name, [])) for name in _SUMS}
        found.update({n_: max(parts[n_] + last.get(n_, []), default=-math.inf) for n_ in _MAXIMA})
        found.update({n_: min(parts[n_] + last.get(n_, []), default=math.inf) for n_ in _MINIMA})
        by_count[k] = _report(found, p_s, a)
    return [by_count[int(k)] for k in counts]


def _in_range(terms: dict[str, FloatArray]) -> bool:
    """No lift above :data:`_LIFT_LIMIT` and every summed term finite (else: the fallback)."""
    return bool(np.all(terms["lift_hi"] <= _LIFT_LIMIT)) and all(
        bool(np.isfinite(terms[name]).all()) for name in _SUMS
    )


def _one_by_one(
    arr: FloatArray, rank: NDArray[np.intp], counts: NDArray[np.int64], a: float
) -> list[LeakageReport]:
    """Each release's report on its own (lifts beyond the float range: log-domain paths)."""
    found: dict[int, LeakageReport] = {}
    for k in (int(v) for v in np.unique(counts)):
        keep = np.zeros(arr.shape[1], dtype=bool)
        keep[rank[:k]] = True
        cols = [arr[:, keep]] + (
            [arr[:, ~keep].sum(axis=1, keepdims=True)] if k < keep.size else []
        )
        q = np.hstack(cols)
        found[k] = leakage_report(q / q.sum(), alpha=a)
    return [found[int(k)] for k in counts]
