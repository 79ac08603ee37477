"""The search for the most informative release of a table that meets lift privacy.

:func:`find_release` runs the steps, each in its own module:

- ``_options.py``: :class:`SearchOptions`, every option of one search, handed whole to each;
  ``_validate.py`` checks the rest of a request (folds, tolerance, columns, records);
- ``_counting.py``: the records counted into the release space (the count table and the labels
  each tuple can be released as); ``_cache.py``: :class:`SearchCache`, that count table and the
  searches reused across calls on the same records (an audit's proposal, frontier and
  alternatives);
- ``_global_recoding.py``: the release space and its releases (:class:`Plan`);
  ``_lattice.py``: the best node of the hierarchies' lattice (``_suppression.py``: which
  classes of a node go to the suppressed cell); ``_local_recoding.py``: its cells generalised
  independently (top-down); ``_one_search.py``: one search at one set of options (global, then
  local) and its in-sample check;
- ``_held_out.py``: :func:`held_out_check`, the searched release checked on held-out records
  (by :mod:`privwatch.release.heldout`);
- ``_margin.py``: the search repeated with a growing credible margin until its held-out check
  passes (the verdict rule of :mod:`privwatch.release.heldout`);
- ``_frontier.py``: :class:`~._frontier.Releases`, the release published at each epsilon (the
  best of the releases searched there and at smaller epsilons, judged there), and the frontier
  of those releases; ``_alternatives.py``: the nearest settings to try when a release is not
  met, each the release published at its settings;
- ``_randomize.py``: ``suppression="randomize"``: the suppressed cells released through an LP
  channel instead of ``*`` (:class:`SuppressionChannel`, its saved form
  :func:`suppression_mechanism`);
- ``_per_tuple.py``: the release labelled onto tuples and records; ``_result.py``:
  :class:`ReleaseResult` and :class:`ReleaseNotMetWarning`.
"""

from ._cache import SearchCache
from ._find_release import find_release
from ._held_out import held_out_check
from ._margin import MARGINS
from ._options import MAX_NODES, MAX_SUPPRESSED, MIN_CLASS_SIZE, SearchOptions
from ._randomize import SUPPRESSIONS, SuppressionChannel, suppression_mechanism
from ._result import ReleaseNotMetWarning, ReleaseResult

__all__ = [
    "MARGINS",
    "MAX_NODES",
    "MAX_SUPPRESSED",
    "MIN_CLASS_SIZE",
    "SUPPRESSIONS",
    "ReleaseNotMetWarning",
    "ReleaseResult",
    "SearchCache",
    "SearchOptions",
    "SuppressionChannel",
    "find_release",
    "held_out_check",
    "suppression_mechanism",
]
