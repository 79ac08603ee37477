"""Searches of one table reused across calls: :class:`SearchCache`.

An audit asks :func:`~privwatch.release.find_release` about the same records many times (the
proposal's epsilons, each searched quickly and then in full; the frontier; the alternatives).
Counting the records, building the hierarchies' lattice groupings and every search are
deterministic functions of the records and the options, so a :class:`SearchCache` kept by the
caller lets later calls reuse the count table (:class:`~._global_recoding.ReleaseSpace`,
with its cached node groupings) and every :class:`~._one_search.Fit` already
searched, instead of repeating them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ..hierarchies import KeyCodes
from ._global_recoding import IntArray, ReleaseSpace

__all__ = ["SearchCache"]


@dataclass
class SearchCache:
    """What :func:`~privwatch.release.find_release` may reuse across calls on the same records.

    Parameters
    ----------
    folds : int
        The held-out folds of the full searches: a call without folds (a quick search) counts
        the records with these folds too, so that its count table serves the full searches (its
        total counts are the same).
    keys : KeyCodes, optional
        The records' key columns factorised once (the engine route's count table): the count
        table is built from them (the same codes) when they are of the frame counted.
    """

    folds: int = 0
    keys: KeyCodes | None = None
    _spaces: dict[Hashable, tuple[Any, ReleaseSpace, IntArray]] = field(default_factory=dict)

    def space(
        self,
        key: Hashable,
        frame: Any,
        folds: int,
        build: Callable[[int], tuple[ReleaseSpace, IntArray]],
    ) -> tuple[ReleaseSpace, IntArray]:
        """The space of ``frame`` (identified by ``key`` and the object itself) counted with
        ``folds`` (or, for a call without folds, the cache's), built by ``build(folds)`` once."""
        want = folds if folds >= 2 else max(self.folds, 1)
        hit = self._spaces.get((key, want))
        if hit is not None and hit[0] is frame:
            return hit[1], hit[2]
        space, row_of = build(want)
        self._spaces[(key, want)] = (frame, space, row_of)  # the frame is kept: its id is stable
        return space, row_of
