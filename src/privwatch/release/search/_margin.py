"""A release searched to pass its held-out check: the credible margin grown until it does.

At the requested epsilon, the most informative release whose held-out check passes is
returned: the search is run with the user's options, and, while its held-out check does not
pass (:func:`~privwatch.release.heldout.held_out_fails`), again with a credible margin on every
cell (:attr:`SearchOptions.confidence` in :data:`MARGINS`, each larger than the last): a cell
must then meet epsilon with the credible bounds of its sensitive shares, so small cells, whose
held-out posteriors stray furthest, are merged or suppressed. The first release that passes is
returned; when none does, the last one tried (the largest margin), and its verdict says so.
"""

from __future__ import annotations

from typing import NamedTuple

from ..heldout import NOTHING_KEPT, HeldOut
from ._global_recoding import ReleaseSpace
from ._one_search import Fit, Fitter, check_fails, checked_release, kept_information
from ._options import SearchOptions

__all__ = ["MARGINS", "Searched", "search_to_pass"]

#: Credible levels tried in turn when a release fails its held-out check. The step from 0.95 to
#: 0.99 is split at 0.975: a margin merges or suppresses every cell that misses it, and on small
#: tables 0.99 can leave nothing released where 0.975 already passes (a 5,000-record table with a
#: 1 % value: 1.70 nats kept and MET at 0.975, every record suppressed at 0.99).
MARGINS = (0.9, 0.95, 0.975, 0.99)


class Searched(NamedTuple):
    """A searched release: the options it was found with (``confidence`` possibly raised), its
    fitter, fit, held-out figures (None without folds) and the information it keeps."""

    options: SearchOptions
    fitter: Fitter
    fit: Fit
    held: HeldOut | None
    information_nats: float


def _search(space: ReleaseSpace, options: SearchOptions) -> Searched:
    """One search, its held-out figures not yet drawn."""
    fitter = Fitter(space, options)
    fit = fitter.fit(space.table.total())
    return Searched(options, fitter, fit, None, kept_information(space, fit.plan))


def search_to_pass(
    space: ReleaseSpace,
    options: SearchOptions,
    folds: int,
    tolerance: float,
    rng: int,
    aim: bool = True,
) -> Searched:
    """The release at ``options``, with the margin grown until its held-out check passes
    (``aim``; see the module docstring).

    Each release tried is checked with one search (:func:`~._one_search.checked_release`):
    the table's tuple model is fitted once and each check evaluates one release. A release
    that keeps nothing (every record '*') is not checked on held-out records: it discloses
    nothing, and it is not met anyway. Of a release the margin goes past, only the verdict is
    used: its interval is not drawn when its point estimate already fails it
    (:func:`~._one_search.check_fails`); the release returned has all its figures."""
    found = _search(space, options)
    checked = folds >= 2 and found.information_nats > NOTHING_KEPT
    if aim and checked:
        for level in MARGINS:
            if found.information_nats <= NOTHING_KEPT or not check_fails(
                space, found.fit.plan, found.fitter.box, rng, tolerance
            ):
                break
            if options.confidence is not None and level <= options.confidence:
                continue
            found = _search(space, options.replace(confidence=level))
    if folds < 2 or found.information_nats <= NOTHING_KEPT:
        return found
    return found._replace(held=checked_release(space, found.fit.plan, found.fitter.box, rng))
