r"""Which observed tuples a watchdog releases, and which it merges.

**Flags** (Hsu et al., the privacy watchdog): a tuple x is flagged when its cell breaks
epsilon-lift privacy, :math:`\max_s |\log p(s \mid x) / p(s)| > \varepsilon` (two-sided; one-
sided only the upper face), on its plug-in posterior or, with a credible ``confidence`` q, on
the q-credible bounds of its sensitive shares (:class:`~privwatch.release.cells.LiftBox`): a
tuple of few records then passes only with a margin fresh records are likely to keep. Flagged
tuples are merged into one released cell (``*``), the X^c-invariant randomization of Sadeghi
et al. Cor. 1.

**Exemptions** (Sadeghi et al. Alg. 1, the (epsilon, delta) relaxation): the flagged tuples are
visited in increasing order of their mass; one is released unchanged when the breach share of
the new partition stays within the ``budget``. The breach share counts the records of every
released cell that breaks (a flagged tuple exempted counts all its records; the merged cell
counts its records when it breaks). Per cell it is at least Sadeghi's eq. (11)
:math:`\sum_s P(s, y) 1\{|i(s, y)| > \varepsilon\}` (which counts only the breaking values'
records), so a partition within the budget meets eq. (11) too. Splitting a tuple out of the
merged cell never lowers I(X; Y) = H(Y), so the algorithm's utility condition always holds and
is not tested. ``epsilon_max`` caps the plug-in |log-lift| of every released cell.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..cells import LiftBox

__all__ = ["cells_of", "flag_tuples", "relaxed_keep"]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def flag_tuples(total: FloatArray, box: LiftBox) -> BoolArray:
    """True for the tuples (rows of ``total``, counts per sensitive value) that break the box."""
    return np.asarray(box.breaks(total), dtype=bool)


def relaxed_keep(
    total: FloatArray,
    flags: BoolArray,
    box: LiftBox,
    budget: float,
    cap: LiftBox | None = None,
) -> BoolArray:
    """The tuples released unchanged: the unflagged ones and the flagged ones the greedy scan
    exempts within ``budget`` (a share of the records; module docstring). ``cap``: the box at
    ``epsilon_max`` that every exempted tuple and the merged cell must stay in."""
    keep = ~flags
    if budget <= 0 or not flags.any():
        return keep
    size = total.sum(1)
    n = float(size.sum())
    star = total[flags].sum(0)
    kept_breach = 0.0  # the unflagged tuples pass the box by definition
    candidates = np.flatnonzero(flags & (size / n <= budget + 1e-12))
    candidates = candidates[np.argsort(size[candidates], kind="stable")]
    if cap is not None and candidates.size:
        candidates = candidates[~cap.breaks(total[candidates])]
    keep = keep.copy()
    for x in candidates.tolist():
        trial = kept_breach + size[x] / n
        if trial > budget + 1e-12:
            break  # candidates come in increasing mass: none later fits
        rest = star - total[x]
        rest_n = float(rest.sum())
        star_breach = rest_n / n if rest_n > 0 and bool(box.breaks(rest[None])[0]) else 0.0
        if trial + star_breach > budget + 1e-12:
            continue
        if cap is not None and rest_n > 0 and bool(cap.breaks(rest[None])[0]):
            continue
        keep[x] = True
        kept_breach, star = trial, rest
    return keep


def cells_of(keep: BoolArray) -> tuple[NDArray[np.int64], int, int]:
    """``(cell_of, n_cells, star)``: each kept tuple its own cell (in tuple order), every other
    tuple (and every tuple never seen) the merged cell ``star``, numbered last."""
    cell_of = np.empty(len(keep), dtype=np.int64)
    n_kept = int(keep.sum())
    cell_of[keep] = np.arange(n_kept)
    cell_of[~keep] = n_kept
    return cell_of, n_kept + 1, n_kept
