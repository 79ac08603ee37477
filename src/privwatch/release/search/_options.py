"""The options of one release search, held once and handed whole to every search.

A release is searched many times: once on all records, once per held-out fold, once per point of
the frontier and once per alternative it suggests. Each of those searches takes one
:class:`SearchOptions`; an alternative changes only what it varies (:meth:`SearchOptions.replace`),
so an option the user set (a credible margin, a node cap...) cannot be dropped on the way.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..._validation import check_nonnegative, check_positive_int, check_probability
from ...exceptions import ValidationError
from ..cells import DISCLOSURES

__all__ = ["MAX_NODES", "MAX_SUPPRESSED", "MIN_CLASS_SIZE", "SearchOptions"]

#: The defaults of a search, written once: :class:`SearchOptions`, ``find_release``,
#: ``privwatch.audit.AuditSpec`` and the command line take them from here.
MAX_SUPPRESSED = 0.05
MAX_NODES = 200
MIN_CLASS_SIZE = 1


@dataclass(frozen=True, kw_only=True)
class SearchOptions:
    """What every search behind one release is asked to do, validated on construction.

    Attributes
    ----------
    epsilon : float
        The lift-privacy level in nats: every released cell has ``|log p(s|y)/p(s)| <= epsilon``
        (``disclosure="both"``) or ``log p(s|y)/p(s) <= epsilon`` (``"positive"``).
    disclosure : {"both", "positive"}
        Two-sided lift privacy, or only an upper bound on the lift.
    max_suppressed : float
        The largest share of the records the search may release as ``*`` in every observed
        column, whichever step does it (the suppressed cell, the top of every hierarchy, local
        recoding): :meth:`~._global_recoding.Plan.suppressed_records` counts them.
    local : bool
        Also try local recoding of the global release's cells; the better one is released.
    confidence : float or None
        None: cells are tested on their plug-in posteriors. A level q in [0.5, 1), e.g. 0.9:
        every cell must also pass with the q-credible bounds of its sensitive shares
        (:class:`~privwatch.release.LiftBox`), so small cells need a margin; information is
        traded for a guarantee that holds on held-out records.
    max_nodes : int
        The most lattice nodes one global search evaluates (the lattice grows as the product of
        the columns' level counts); at the cap the global recoding is the best one found, not
        proven best (the release is valid either way).
    useful : str or None
        None: the information kept is the entropy of the released cells; a column name: their
        mutual information with that column.
    min_class_size : int
        K: every released cell but the suppressed one (every column ``*``) holds at least K
        records (k-anonymity of the release at K); smaller cells are generalised further or
        suppressed within ``max_suppressed``. 1 (the default): no such rule.

    Examples
    --------
    >>> o = SearchOptions(epsilon=0.5, confidence=0.9)
    >>> o.replace(disclosure="positive")
    SearchOptions(epsilon=0.5, disclosure='positive', max_suppressed=0.05, local=True, \
confidence=0.9, max_nodes=200, useful=None, min_class_size=1)
    """

    epsilon: float
    disclosure: str = "both"
    max_suppressed: float = MAX_SUPPRESSED
    local: bool = True
    confidence: float | None = None
    max_nodes: int = MAX_NODES
    useful: str | None = None
    min_class_size: int = MIN_CLASS_SIZE

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: the validated values replace the given ones once
        set_(self, "epsilon", check_nonnegative(self.epsilon, "epsilon"))
        if self.disclosure not in DISCLOSURES:
            raise ValidationError(
                f"`disclosure` must be one of {DISCLOSURES}; got {self.disclosure!r}."
            )
        set_(self, "max_suppressed", check_probability(self.max_suppressed, "max_suppressed"))
        if self.confidence is not None:
            level = check_probability(self.confidence, "confidence")
            if not 0.5 <= level < 1:
                raise ValidationError(f"`confidence` must be in [0.5, 1); got {self.confidence!r}.")
            set_(self, "confidence", level)
        set_(self, "max_nodes", check_positive_int(self.max_nodes, "max_nodes"))
        set_(self, "min_class_size", check_positive_int(self.min_class_size, "min_class_size"))

    def replace(self, **changes: Any) -> SearchOptions:
        """The same options with ``changes`` (validated again), e.g. another ``epsilon``."""
        return dataclasses.replace(self, **changes)

    def arguments(self) -> dict[str, Any]:
        """The options as keyword arguments of :func:`~privwatch.release.find_release`."""
        return dataclasses.asdict(self)
