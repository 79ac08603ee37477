"""Fit once, evaluate many releases: the held-out check's tuple model of one count table.

Everything the held-out estimate learns from the data that does not depend on the release or
on epsilon is fitted here once per count table and kept (:meth:`HeldOutModel.of` caches the
model of the last few tables), so that the check of several releases of one table (the search
margins, the alternatives) pays for it once:

- per modelled value, the prior family (:data:`~._prior.PRIOR_CANDIDATES`: main effects' ridge,
  smooth or rough G) chosen by **cross-fitted predictive score**: per fold, each candidate is
  fitted on the other folds and scores the held-out counts of the tuples (beta-binomial log
  predictive of the tuple's posterior, summed; at most MAX_SCORE_TUPLES tuples per fold, at
  most MAX_SCORE_FOLDS folds), independent of any release;
- the chosen candidate fitted on all records, and every tuple's posterior mean and variance;
- ``replicates`` draws of everything the estimate is unsure of beyond the cells' own noise:
  the prior family (re-chosen on Bayesian-bootstrap weights of the scored tuples, so the choice's
  own uncertainty is in the interval), G (refitted on Bayesian-bootstrap weights of the tuples)
  and p(s) (a Dirichlet draw from the sensitive counts: the population's p(s) is unknown, and
  the box moves with it).

The fit is a function of the table alone: its random choices (subsets of large tables, the
bootstrap weights) come from a generator seeded by a constant, so figures do not depend on the
order of the calls; the evaluation's draws come from the caller's ``rng``. The values of a
table, and a value's G refits, are fitted in FIT_THREADS threads where BLAS runs on one
thread (:meth:`HeldOutModel.values`, :meth:`HeldOutModel.draws`): the same figures. The search
starts them in the background before it needs them (:meth:`HeldOutModel.prefetch`), and
searches meanwhile.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy.special import betaln
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]  # sklearn dep

from ..cells import CountTable
from . import _prior as eb
from ._identified import Gap, fitted_log_likelihood, gap_prior
from ._posterior import GridRows, posteriors

__all__ = ["HeldOutModel", "ValueModel", "one_blas_thread"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
T = TypeVar("T")
R = TypeVar("R")

#: Most tuples per fold, and most folds, whose held-out counts score the prior families.
MAX_SCORE_TUPLES = 4_000
MAX_SCORE_FOLDS = 3
#: Seed of the fit's own random choices (the fit is a function of the table alone).
FIT_SEED = 20_261_126
#: Distinct refits of G per prior family (the replicates cycle through them, each with its own
#: draw of p(s) and of the family's choice).
G_REFITS = 8
#: Models of this many tables are kept (the latest used).
CACHE_SIZE = 4
#: Threads fitting the values of one table (:meth:`HeldOutModel.values`).
FIT_THREADS = 2


@dataclass
class ValueModel:
    """The tuple model of one projected sensitive value (a column of the projected counts)."""

    column: int
    prior: float
    fitted: eb.Fitted
    scores: FloatArray  # (candidates, scored tuples): held-out log predictive per tuple
    mean: FloatArray  # per tuple row: posterior mean under ``fitted`` (0 where unseen)
    var: FloatArray
    rng: np.random.Generator  # the value's own generator (its fit's and draws' random choices)
    full: dict[int, eb.Fitted] = field(default_factory=dict)  # candidates fitted on all records
    draws: list[tuple[int, FloatArray]] = field(default_factory=list)  # (candidate, alpha)
    refits: dict[int, list[FloatArray]] = field(default_factory=dict)  # per candidate
    outside: dict[tuple[float, float], FloatArray] = field(default_factory=dict)  # per bounds
    gaps: dict[tuple[float, float], Gap | None] = field(default_factory=dict)  # per bounds
    fit_ll: dict[bool, float] = field(default_factory=dict)  # gap test's first term, by plain
    plain: eb.Fitted | None = None  # the fitted family without main effects (:meth:`gap`)

    def out(self, model: HeldOutModel, bounds: tuple[float, float], rows: IntArray) -> FloatArray:
        """P(share outside ``bounds``) of the tuple ``rows`` under the fitted prior (kept per
        bounds, computed for the rows not asked before)."""
        cache = self.outside.setdefault(bounds, np.full(len(model.n), np.nan))
        todo = rows[np.isnan(cache[rows])]
        if len(todo):
            f = self.fitted
            k, n = model.x[todo, self.column], model.n[todo]
            cache[todo] = posteriors(f.alpha, k, n, f.eta[todo], [bounds], model.grid_rows)[2][:, 0]
        return cache[rows]

    def gap(self, model: HeldOutModel, bounds: tuple[float, float]) -> Gap | None:
        """The gap priors of ``bounds`` when the records do not reject them, else None
        (:func:`~._identified.gap_prior` of the fitted family, then, where it has main effects,
        of the same prior without them; kept per bounds)."""
        if bounds not in self.gaps:
            gap = self._gap_of(self.fitted, False, bounds)
            cand = self.fitted.candidate
            if gap is None and not np.isinf(cand.ridge):
                if self.plain is None:  # not kept in ``full``: the draws' fits stay theirs
                    k, n, codes = model.x[:, self.column], model.n, model.table.codes
                    rng = np.random.default_rng([FIT_SEED, self.column, 1])
                    plain = eb.Candidate(np.inf, cand.df, cand.penalty)
                    self.plain = eb.fit_candidate(plain, k, n, codes, self.prior, rng)
                gap = self._gap_of(self.plain, True, bounds)
            self.gaps[bounds] = gap
        return self.gaps[bounds]

    def _gap_of(self, family: eb.Fitted, plain: bool, bounds: tuple[float, float]) -> Gap | None:
        """:func:`~._identified.gap_prior` of ``family`` (the fitted one, or with ``plain`` the
        one without main effects), its box-free first term computed once per family."""
        if plain not in self.fit_ll:
            self.fit_ll[plain] = fitted_log_likelihood(family)
        return gap_prior(family, bounds, self.fit_ll[plain])


class HeldOutModel:
    """The release-independent part of the held-out estimate of one count table.

    Use :meth:`of` (cached per table); :meth:`value` and :meth:`prior_draws` fit lazily."""

    def __init__(self, table: CountTable, projection: FloatArray) -> None:
        self.table = table
        self.projection = projection
        total = table.total()
        self.n = total.sum(1)
        self.x = total @ projection
        self.prior_counts = total.sum(0)
        self._values: dict[int, ValueModel] = {}
        self.grid_rows = GridRows()  # the tuples' likelihood rows, shared by every check
        self._priors: list[FloatArray] = []
        self._rng = np.random.default_rng(FIT_SEED)  # p(s) draws; each value has its own
        self._pending: dict[int, Future[ValueModel]] = {}  # values fitted in the background

    def _value_rng(self, column: int) -> np.random.Generator:
        return np.random.default_rng([FIT_SEED, column])

    _cache: ClassVar[list[tuple[weakref.ref[CountTable], bytes, HeldOutModel]]] = []

    @classmethod
    def of(cls, table: CountTable, projection: FloatArray) -> HeldOutModel:
        """The model of ``table`` (the same object) under ``projection``, fitted once."""
        key = np.ascontiguousarray(projection).tobytes()
        for ref, k, model in cls._cache:
            if ref() is table and k == key:
                return model
        model = cls(table, projection)
        cls._cache = [e for e in cls._cache if e[0]() is not None][-(CACHE_SIZE - 1) :]
        cls._cache.append((weakref.ref(table), key, model))
        return model

    def value(self, column: int, prior: float) -> ValueModel:
        """The fitted model of projected column ``column`` (its share of records ``prior``)."""
        self._collect([column])
        if column not in self._values:
            self._values[column] = self._fit_value(column, prior)
        return self._values[column]

    def values(self, wanted: Sequence[tuple[int, float]]) -> list[ValueModel]:
        """:meth:`value` of each (column, prior), those not fitted yet fitted in FIT_THREADS
        threads (the fits release the GIL in numpy and BLAS; each value's fit draws from its
        own generator and reads the table only, so the figures are those of one thread).
        Only where BLAS runs on one thread (the search's held-out check holds it there): a
        BLAS product's bits depend on its threads, and two fits would share them. Values
        :meth:`prefetch` is fitting are waited for."""
        self._collect([c for c, _ in wanted])
        todo = list({c: p for c, p in wanted if c not in self._values}.items())
        for (c, _), vm in zip(todo, self._map(lambda cp: self._fit_value(*cp), todo), strict=True):
            self._values[c] = vm
        return [self.value(c, p) for c, p in wanted]

    def prefetch(self, wanted: Sequence[tuple[int, float]], replicates: int = 0) -> None:
        """Start fitting the values ``wanted`` (column, prior) not fitted yet in FIT_THREADS
        background threads, each on one BLAS thread (:func:`one_blas_thread`, held while any
        thread is in it), each value's ``replicates`` :meth:`draws` after its fit, and return
        at once: the caller goes on with work that needs no model (the searches) while they
        are fitted, and :meth:`values` waits for them. The same figures as :meth:`values`
        and :meth:`draws` give: each value's fit and draws read the table alone and draw from
        the value's own generator in the same order (the fit, then the draws), on one BLAS
        thread."""
        todo = {c: p for c, p in wanted if c not in self._values and c not in self._pending}
        if not todo:
            return
        pool = ThreadPoolExecutor(max(1, min(FIT_THREADS, len(todo))))
        for column, prior in todo.items():
            self._pending[column] = pool.submit(self._fit_alone, column, prior, replicates)
        pool.shutdown(wait=False)  # its threads end when the fits are done

    def _fit_alone(self, column: int, prior: float, replicates: int) -> ValueModel:
        with one_blas_thread():
            value = self._fit_value(column, prior)
            if replicates:
                self._draws(value, replicates, lambda fit, jobs: [fit(job) for job in jobs])
            return value

    def _collect(self, columns: Sequence[int]) -> None:
        """Keep the background fits (:meth:`prefetch`) of ``columns``, waiting for them."""
        for c in columns:
            pending = self._pending.pop(c, None)
            if pending is not None:
                self._values[c] = pending.result()

    def _fit_value(self, column: int, prior: float) -> ValueModel:
        k, n, codes = self.x[:, column], self.n, self.table.codes
        rng = self._value_rng(column)
        scores = self._scores(column, prior, rng)
        best = int(np.argmax(scores.sum(1)))
        fitted = eb.fit_candidate(eb.PRIOR_CANDIDATES[best], k, n, codes, prior, rng)
        rows = np.flatnonzero(n > 0)
        mean, var = np.zeros(len(n)), np.zeros(len(n))
        m, v, _ = posteriors(fitted.alpha, k[rows], n[rows], fitted.eta[rows], [(0.0, 1.0)])
        mean[rows], var[rows] = m[:, 0], v[:, 0]
        return ValueModel(column, prior, fitted, scores, mean, var, rng, {best: fitted})

    def _scores(self, column: int, prior: float, rng: np.random.Generator) -> FloatArray:
        """Held-out log predictive of every candidate on the scored tuples of each fold."""
        counts = self.table.counts
        proj = self.projection[:, column]
        n_folds = counts.shape[2]
        out = []
        starts: dict[int, FloatArray] = {}  # each candidate's fit on the previous fold
        for j in range(min(n_folds, MAX_SCORE_FOLDS) if n_folds >= 2 else 0):
            held = counts[:, :, j]
            train = self.table.total() - held
            kt, nt = train @ proj, train.sum(1)
            kh, nh = held @ proj, held.sum(1)
            rows = np.flatnonzero((nh > 0) & (nt > 0))
            if len(rows) > MAX_SCORE_TUPLES:
                rows = np.sort(rng.choice(rows, MAX_SCORE_TUPLES, replace=False))
            per = []
            etas: dict[float, FloatArray] = {}
            for i, cand in enumerate(eb.PRIOR_CANDIDATES):
                fitted = eb.fit_candidate(
                    cand, kt, nt, self.table.codes, prior, rng, etas.get(cand.ridge),
                    starts.get(i),
                )  # fmt: skip
                etas[cand.ridge], starts[i] = fitted.eta, fitted.alpha
                m, v, _ = posteriors(fitted.alpha, kt[rows], nt[rows], fitted.eta[rows], [(0, 1)])
                per.append(_beta_binomial(m[:, 0], v[:, 0], kh[rows], nh[rows]))
            out.append(np.stack(per))
        if not out:  # no folds: the first candidate
            return np.zeros((len(eb.PRIOR_CANDIDATES), 1))
        return np.concatenate(out, axis=1)

    def draws(self, value: ValueModel, replicates: int) -> list[tuple[int, FloatArray]]:
        """``replicates`` draws (candidate, alpha) of the prior of ``value``: the family
        re-chosen on bootstrap weights of the scored tuples, G refitted on bootstrap weights of
        the tuples (at most G_REFITS per family, cycled; the candidate's eta:
        ``value.full[candidate].eta``). The random draws are made in order first; the refits
        they ask for then run in FIT_THREADS threads (:meth:`_map`: the same figures)."""
        return self._draws(value, replicates, self._map)

    def _draws(
        self,
        value: ValueModel,
        replicates: int,
        run: Callable[[Callable[[Any], FloatArray], list[Any]], list[FloatArray]],
    ) -> list[tuple[int, FloatArray]]:
        """:meth:`draws`, the refits made by ``run`` (``[fit(job) for job in jobs]``)."""
        k, n, codes = self.x[:, value.column], self.n, self.table.codes
        seen = [d[0] for d in value.draws]
        planned: list[int] = []  # the family of each new draw
        jobs: list[tuple[int, FloatArray]] = []  # (family, bootstrap weights) of each refit
        while len(value.draws) + len(planned) < replicates:
            w = value.rng.gamma(1.0, size=value.scores.shape[1])
            best = int(np.argmax(value.scores @ w))
            if best not in value.full:
                cand = eb.PRIOR_CANDIDATES[best]
                value.full[best] = eb.fit_candidate(cand, k, n, codes, value.prior, value.rng)
            if (seen + planned).count(best) < G_REFITS:
                jobs.append((best, eb.bootstrap_weights(value.full[best], value.rng)))
            planned.append(best)
        alphas = run(lambda job: eb.refit_alpha(value.full[job[0]], job[1]), jobs)
        for (best, _), alpha in zip(jobs, alphas, strict=True):
            value.refits.setdefault(best, []).append(alpha)
        for best in planned:
            i = sum(d[0] == best for d in value.draws)
            value.draws.append((best, value.refits[best][i % G_REFITS]))
        return value.draws[:replicates]

    def _map(self, fit: Callable[[T], R], jobs: list[T]) -> list[R]:
        """``[fit(job) for job in jobs]``, in FIT_THREADS threads where BLAS runs on one
        thread (:meth:`values`)."""
        if len(jobs) < 2 or FIT_THREADS < 2 or not _one_blas_thread():
            return [fit(job) for job in jobs]

        def one(job: T) -> R:
            with one_blas_thread():
                return fit(job)

        with ThreadPoolExecutor(min(FIT_THREADS, len(jobs))) as pool:
            return list(pool.map(one, jobs))

    def prior_draws(self, replicates: int) -> list[FloatArray]:
        """``replicates`` draws of the joint p(s): Dirichlet(sensitive counts)."""
        while len(self._priors) < replicates:
            self._priors.append(self._rng.dirichlet(np.maximum(self.prior_counts, 1e-3)))
        return self._priors[:replicates]


@cache
def _blas() -> Any:
    """The process's thread pools, found once (a lookup costs ~3 ms; asking them ~0.03 ms)."""
    return ThreadpoolController()


class _Limit:
    """The one-BLAS-thread limit of the process and the threads inside it."""

    lock = threading.Lock()
    holders = 0
    limiter: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """A context in which every BLAS library of the process runs on one thread (threadpoolctl).
    The held-out model's products are small (at most a few thousand rows by the prior's 181
    grid points): split over threads they cost 10-35x the CPU on a busy 2-core machine
    (benchmarks/bench_fixed_part.py, BENCHMARKS.md "#42 items 2 and 3"), and a product's bits
    depend on its threads.

    The limit is the process's (OpenBLAS has one thread pool), so it is held while any thread
    is inside, nested or not: set by the first to enter, the original limits restored by the
    last to leave, whichever threads they are (a check in one thread cannot lift it under a
    fit running in another). threadpoolctl lets only one thread set OpenBLAS's limit (the
    first that did, while it lives): each change here takes that role and gives it up."""
    with _Limit.lock:
        if _Limit.holders == 0:
            _release_blas_control()
            _Limit.limiter = _blas().limit(limits=1, user_api="blas")
            _release_blas_control()
        _Limit.holders += 1
    try:
        yield
    finally:
        with _Limit.lock:
            _Limit.holders -= 1
            if _Limit.holders == 0:
                _release_blas_control()
                _Limit.limiter.restore_original_limits()
                _Limit.limiter = None
                _release_blas_control()


def _release_blas_control() -> None:
    """Let any thread set the BLAS limits next (threadpoolctl >= 3.6 gives OpenBLAS's to the
    first thread that sets them; older versions have no such rule)."""
    for lib in _blas().lib_controllers:
        clear = getattr(lib, "clear_controlling_thread", None)
        if clear is not None:
            clear(force=True)


def _one_blas_thread() -> bool:
    """Whether every BLAS library of the process runs on one thread now."""
    return all(i["num_threads"] == 1 for i in _blas().select(user_api="blas").info())


def _beta_binomial(mean: FloatArray, var: FloatArray, k: FloatArray, n: FloatArray) -> FloatArray:
    """Log predictive of k of n under the Beta matching (mean, var) (constant terms dropped)."""
    m = np.clip(mean, 1e-9, 1 - 1e-9)
    v = np.clip(var, 1e-12, m * (1 - m) * (1 - 1e-9))
    phi = m * (1 - m) / v - 1.0
    a, b = m * phi, (1 - m) * phi
    return np.asarray(betaln(a + k, b + n - k) - betaln(a, b), dtype=float)
