"""What the searches of one count table reuse below a whole search: :class:`SearchMemo`.

An audit that is not met searches the same table many times: each margin of the credible level
(:mod:`._margin`), each epsilon of the ladder (:mod:`._frontier`), each alternative
(:mod:`._alternatives`). Whole searches are remembered by
:meth:`~._global_recoding.ReleaseSpace.remember`; searches that differ in one option still
share their parts, kept here:

- the lift test of a lattice node's cells (:meth:`SearchMemo.node_breaks`): it depends on the
  node, the counts and the lift box, not on the suppression limit or the minimum class size,
  and across credible levels q1 < q2 the cells it breaks only grow (``betainc(a, b, hi) < q1``
  implies ``< q2``), so a search at another level tests only the cells the masks known at the
  other levels leave open;
- the local refinement of a start (:meth:`SearchMemo.refined`): it depends on the start, the
  counts, the lift test and the minimum class size, not on the suppression limit;
- a node's cell counts, their sizes and the information bound (:meth:`SearchMemo.node_counts`):
  they depend on the node and the counts only, and the best-first order of the lattice follows
  the bound alone, so the searches of one table at every epsilon, margin and suppression limit
  evaluate mostly the same nodes. A node's cell counts not yet known are rolled up from those
  of a finer node one level down in one column (:meth:`SearchMemo.finer_counts`; the
  hierarchies are nested, so each finer cell lies in one cell of the node) rather than summed
  over every tuple row: integer counts, so the sums are exact and the bits the same.

Each is a deterministic function of its key, so the answers are the ones computed afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from ..cells import LiftBox

__all__ = ["SearchMemo"]

FloatArray = NDArray[np.float64]
T = TypeVar("T")


class SearchMemo:
    """The lattice nodes' lift tests and the local refinements of one count table."""

    #: Largest memory (bytes) of the lift-test masks kept (bit-packed).
    BREAKS_BYTES = 64 * 2**20
    #: Most local refinements kept (each holds a plan: levels of every tuple row).
    MAX_REFINED = 32
    #: Largest memory (bytes) of the nodes' cell counts kept (held as 32-bit integers where
    #: they fit: whole counts, so the same floats come back). A NOT MET search of a 96,000-
    #: tuple table evaluates about 200 distinct nodes, about 130 MiB so held.
    COUNTS_BYTES = 128 * 2**20

    def __init__(self) -> None:
        self._breaks: dict[Hashable, dict[float | None, tuple[np.ndarray, int]]] = {}
        self._breaks_bytes = 0
        self._refined: dict[Hashable, object] = {}
        self._counts: dict[Hashable, tuple[np.ndarray, FloatArray, float]] = {}
        self._counts_bytes = 0

    def node_counts(
        self,
        node: tuple[int, ...],
        counts_key: Hashable,
        count: Callable[[], tuple[FloatArray, FloatArray, float]],
        as_float: bool = True,
    ) -> tuple[np.ndarray, FloatArray, float]:
        """``count()``: the cell counts of ``node`` under the counts identified by
        ``counts_key``, their row sums and the node's information bound, kept while they fit
        in :attr:`COUNTS_BYTES` (the arrays are shared: callers do not write to them).
        ``as_float=False``: the cell counts as kept (perhaps 32-bit integers; :meth:`as_float`
        gives the floats), for a caller that may not need them."""
        key = (node, counts_key)
        hit = self._counts.get(key)
        if hit is not None:
            return _as_float(hit) if as_float else hit
        out = count()
        held = _held(out)
        size = held[0].nbytes + held[1].nbytes
        if self._counts_bytes + size <= self.COUNTS_BYTES:
            self._counts[key] = held
            self._counts_bytes += size
        return out

    def finer_counts(
        self, node: tuple[int, ...], counts_key: Hashable
    ) -> tuple[tuple[int, ...], FloatArray] | None:
        """The kept cell counts, under the counts identified by ``counts_key``, of the node
        one level finer than ``node`` in one column with the fewest cells (None if none is
        kept): every cell of it lies in one cell of ``node`` (nested hierarchies)."""
        best: tuple[tuple[int, ...], FloatArray] | None = None
        for j, level in enumerate(node):
            if level == 0:
                continue
            finer = (*node[:j], level - 1, *node[j + 1 :])
            hit = self._counts.get((finer, counts_key))
            if hit is not None and (best is None or hit[0].shape[0] < best[1].shape[0]):
                best = (finer, hit[0])
        return None if best is None else (best[0], _float_counts(best[1]))

    def node_breaks(
        self,
        node: tuple[int, ...],
        counts_key: Hashable,
        box: LiftBox,
        ct: FloatArray | Callable[[], FloatArray],
        plugin: bool = False,
    ) -> np.ndarray:
        """``box.breaks(ct)`` (``plugin``: ``box.breaks_plugin(ct)``) for the cells ``ct`` of
        ``node`` under the counts identified by ``counts_key`` (integer counts only: see
        :meth:`LiftBox.breaks`), kept per node, counts and box but its credible level. At a
        level not yet tested, the cells broken at a smaller level (or by the plug-in test) are
        broken and those passing at a larger level pass; only the others are tested. ``ct``
        may be a function giving them, called only when the test is not kept."""
        key = (node, counts_key, box.signature)
        masks = self._breaks.get(key)
        level = None if plugin else box.confidence
        if masks is not None and level in masks:
            packed, n = masks[level]
            return np.unpackbits(packed, count=n).astype(bool)
        if callable(ct):
            ct = ct()
        if plugin:
            out = np.asarray(box.breaks_plugin(ct), dtype=bool)
        else:
            broken = passing = None
            rank = -1.0 if level is None else level  # the plug-in test: below every level
            for other, (packed, n) in (masks or {}).items():
                mask = np.unpackbits(packed, count=n).astype(bool)
                if (-1.0 if other is None else other) < rank:
                    broken = mask if broken is None else broken | mask
                else:
                    passing = ~mask if passing is None else passing | ~mask
            out = np.asarray(box.breaks(ct, broken=broken, passing=passing), dtype=bool)
        packed = np.packbits(out)
        if self._breaks_bytes + packed.nbytes <= self.BREAKS_BYTES:
            self._breaks.setdefault(key, {})[level] = (packed, ct.shape[0])
            self._breaks_bytes += packed.nbytes
        return out

    @staticmethod
    def as_float(ct: np.ndarray) -> FloatArray:
        """Kept cell counts (:meth:`node_counts` with ``as_float=False``) as floats."""
        return _float_counts(ct)

    def refined(self, key: Hashable, refine: Callable[[], T]) -> T:
        """``refine()`` (a local refinement identified by ``key``), made once while at most
        :attr:`MAX_REFINED` are kept."""
        if key in self._refined:
            return cast(T, self._refined[key])
        out = refine()
        if len(self._refined) < self.MAX_REFINED:
            self._refined[key] = out
        return out


_INT32 = np.iinfo(np.int32)


def _held(counted: tuple[FloatArray, FloatArray, float]) -> tuple[np.ndarray, FloatArray, float]:
    """A node's counts as kept: the cell counts as 32-bit integers when they are whole and
    fit (half the memory; :func:`_as_float` gives the same floats back), else as they are."""
    ct, sizes, bound = counted
    if ct.size and _INT32.min <= ct.min() and ct.max() <= _INT32.max:
        small = ct.astype(np.int32)
        if np.array_equal(small, ct):
            small.flags.writeable = False
            return small, sizes, bound
    return counted


def _as_float(
    held: tuple[np.ndarray, FloatArray, float],
) -> tuple[FloatArray, FloatArray, float]:
    """The kept counts with the cell counts as floats (:func:`_float_counts`)."""
    return _float_counts(held[0]), held[1], held[2]


def _float_counts(ct: np.ndarray) -> FloatArray:
    """Kept cell counts as floats (read-only, like the ones computed)."""
    if ct.dtype == np.float64:
        return ct
    out = ct.astype(np.float64)
    out.flags.writeable = False
    return out
