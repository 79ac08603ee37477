"""The held-out check: is the guarantee still true on records the release was not fitted on?

K-fold cross-fitting: the release is searched on K-1 folds, the held-out fold is released through
it, and each released cell's posterior p(s | cell) is estimated from the held-out records alone.
Two figures per quantity:

- *plug-in*: the share of held-out records whose cell's held-out posterior breaks epsilon, and
  the worst held-out log-lift (small cells make both pessimistic: a cell of three records shows
  a zero count for most sensitive values);
- *Bayesian*: each cell's sensitive distribution gets a Dirichlet posterior whose prior is centred
  on the population, Dirichlet(n + (S/2) p(s)) (a Beta posterior per sensitive value, with the
  total prior weight of Jeffreys' prior spread by the population shares, so that a cell with no
  records of a rare value is not credited half a record of it); the breach probability (the
  share of records whose cell breaks epsilon in
  the population) and the worst log-lift are drawn from it, giving a posterior mean and a 95 %
  credible interval. The prior p(s) is the whole data's, whose error is negligible next to a
  cell's.

The in-sample guarantee is exact for the fitted distribution only; these figures are what it is
worth for the population.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray

from ._cells import CountTable, LiftBox, cell_counts
from ._search import Plan, ReleaseSpace, release_cells

__all__ = ["HeldOut", "held_out_check"]

FloatArray = NDArray[np.float64]
#: Gamma variates drawn at once (160 MB of float64; about twice that in flight per thread).
_CHUNK_VARIATES = 20_000_000
#: Threads drawing chunks at once (memory: about 0.35 GB each).
_MAX_THREADS = 4


@dataclass(frozen=True)
class HeldOut:
    """Held-out figures of a release procedure (see the module docstring)."""

    folds: int
    n_records: int
    breach_probability: float
    breach_probability_ci: tuple[float, float]
    breach_probability_plugin: float
    max_log_lift: float
    max_log_lift_ci: tuple[float, float]
    max_log_lift_plugin: float
    interval: str = "95 % credible interval under a Dirichlet posterior per cell, prior (S/2) p(s)"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def held_out_check(
    space: ReleaseSpace,
    table: CountTable,
    fit: Callable[[FloatArray], Plan],
    box: LiftBox,
    *,
    draws: int = 400,
    rng: np.random.Generator,
) -> HeldOut:
    """Cross-fit ``fit`` over the folds of ``table`` and measure the guarantee on held-out data.

    The ``draws`` posterior draws are taken in chunks of at most ``_CHUNK_VARIATES`` gamma
    variates. One chunk draws from ``rng``; several chunks each draw from their own child
    generator (``rng.spawn``, in chunk order) on up to ``_MAX_THREADS`` threads, so the figures
    depend on ``rng`` alone, never on the number of threads.
    """
    n_folds = table.counts.shape[2]
    cells: list[FloatArray] = []
    for k in range(n_folds):
        plan = fit(table.total(exclude_fold=k))
        cell_of, n_cells = release_cells(space, plan)
        ct = cell_counts(cell_of, n_cells, table.total(only_fold=k))
        cells.append(ct[ct.sum(1) > 0])
    ct = np.concatenate(cells, axis=0)
    total = table.total().sum(0)
    alpha = 0.5 * ct.shape[1] * total / total.sum()
    size = ct.sum(1)
    n = float(size.sum())
    plug_worst = box.worst(ct)
    breach_plugin = float(size[plug_worst > box.epsilon + 1e-12].sum() / n)
    breach = np.empty(draws)
    worst = np.empty(draws)
    chunk = max(1, int(_CHUNK_VARIATES // max(ct.size, 1)))
    starts = list(range(0, draws, chunk))

    def draw(gen: np.random.Generator, start: int) -> None:
        d = min(chunk, draws - start)
        post = gen.gamma(ct[None] + alpha, size=(d, *ct.shape))
        post /= post.sum(-1, keepdims=True)
        w = box.worst(post)  # (d, cells)
        breach[start : start + d] = ((w > box.epsilon + 1e-12) * size).sum(1) / n
        worst[start : start + d] = w.max(1)

    if len(starts) == 1:
        draw(rng, 0)
    else:  # one child generator per chunk: the same draws whatever the number of threads
        children = rng.spawn(len(starts))
        workers = min(len(starts), os.cpu_count() or 1, _MAX_THREADS)
        with ThreadPoolExecutor(workers) as pool:  # NumPy's gamma and ufuncs release the GIL
            list(pool.map(draw, children, starts))

    def q(x: FloatArray, level: float) -> float:
        return float(np.quantile(x, level, method="inverted_cdf"))  # no inf - inf interpolation

    return HeldOut(
        folds=n_folds,
        n_records=round(n),
        breach_probability=float(breach.mean()),
        breach_probability_ci=(q(breach, 0.025), q(breach, 0.975)),
        breach_probability_plugin=breach_plugin,
        max_log_lift=q(worst, 0.5),
        max_log_lift_ci=(q(worst, 0.025), q(worst, 0.975)),
        max_log_lift_plugin=float(plug_worst.max()),
    )
