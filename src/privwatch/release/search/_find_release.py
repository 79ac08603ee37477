"""``find_release``: the most detailed release of a table that meets lift privacy.

Notation: Hsu et al. and Sadeghi et al. write S for the sensitive attribute, X for the observed
tuple and Y for the release; epsilon-lift privacy asks |log p(s|y)/p(s)| <= epsilon for every
released cell y (``disclosure="both"``, Hsu et al. Def. 1) or only log p(s|y)/p(s) <= epsilon
(``"positive"``: enhanced beta-likeness of Cao & Karras, VLDB 2012, with beta = e^epsilon - 1).

The steps, each in its own module: the request is checked (:mod:`._options`, :mod:`._validate`),
counted (:mod:`._counting`), searched (:mod:`._one_search`), checked on held-out records
(:mod:`._held_out`) with the margin grown until that check passes (:mod:`._margin`), judged by
the verdict rule (:mod:`privwatch.release.heldout`), given a frontier (:mod:`._frontier`) and
alternatives (:mod:`._alternatives`), and labelled back onto the records (:mod:`._per_tuple`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..cells import table_protection
from ..heldout import FOLDS, TOLERANCE, held_out_verdict
from ..hierarchies import SUPPRESSED, Hierarchy
from ._alternatives import suggest as suggest_alternatives
from ._cache import SearchCache
from ._counting import count_space
from ._frontier import Releases, frontier_points
from ._global_recoding import IntArray, ReleaseSpace
from ._margin import Searched
from ._one_search import in_sample_check, input_information, kept_information
from ._options import MAX_NODES, MAX_SUPPRESSED, MIN_CLASS_SIZE, SearchOptions
from ._per_tuple import per_tuple_table, record_tables, unique_records
from ._randomize import check_suppression, randomize_suppression
from ._result import ReleaseNotMetWarning, ReleaseResult
from ._validate import check_request

__all__ = ["ReleaseNotMetWarning", "ReleaseResult", "find_release"]


def find_release(
    frame: pd.DataFrame,
    sensitive: str | Sequence[str],
    observed: Sequence[str],
    *,
    epsilon: float,
    disclosure: str = "both",
    max_suppressed: float = MAX_SUPPRESSED,
    hierarchies: Mapping[str, str | Path | Hierarchy] | None = None,
    useful: str | None = None,
    local: bool = True,
    folds: int = FOLDS,
    held_out_tolerance: float = TOLERANCE,
    frontier_epsilons: Sequence[float] | None = None,
    suggest: bool = True,
    confidence: float | None = None,
    counts_column: str | None = None,
    max_nodes: int = MAX_NODES,
    min_class_size: int = MIN_CLASS_SIZE,
    rng: int = 0,
    aim: bool = True,
    cache: SearchCache | None = None,
    suppression: str = "star",
) -> ReleaseResult:
    """Search the most informative release of ``frame`` that meets epsilon-lift privacy.

    Global recoding over the lattice of hierarchy levels, then local recoding of its cells; every
    released cell meets epsilon exactly on the data (verified). With ``aim`` and held-out folds,
    a release whose held-out check fails is searched again with a growing credible margin until
    it passes (:mod:`~._margin`). The release published at epsilon is the best of that one and
    the releases searched so at the smaller epsilons of :data:`~._frontier.LADDER`, of the
    frontier and the requested one, each judged at epsilon (:class:`~._frontier.Releases`):
    what meets a smaller epsilon meets epsilon, so information kept never falls as epsilon grows
    and the frontier, the alternatives and the release agree. Not met (a
    :class:`ReleaseNotMetWarning`) by the rules of :mod:`~privwatch.release.heldout`: it keeps
    nothing, protects no sensitive value,
    or the upper end of its held-out breach share's 95 % interval exceeds ``held_out_tolerance``;
    ``suggest`` then searches alternatives (:mod:`~._alternatives`).

    Parameters
    ----------
    frame, sensitive, observed
        The records (or, with ``counts_column``, a count table as
        :func:`privwatch.engines.count_table` returns), the sensitive and the observed columns.
    epsilon, disclosure, max_suppressed, useful, local, confidence, max_nodes, min_class_size
        The search options (:class:`~privwatch.release.search.SearchOptions`), used by every
        search: the release, its held-out folds, its frontier and its alternatives.
    hierarchies : mapping, optional
        Per observed column, a hierarchy file or :class:`Hierarchy`; built from the data else.
    folds, held_out_tolerance, rng
        Held-out folds (0: no check), the tolerated breach share, and the seed of both.
    frontier_epsilons : sequence of float, optional
        The frontier's epsilons (default: 0.25, 0.5, 1, 2, 3 and ``epsilon``).
    cache : SearchCache, optional
        Reuse the count table and searches across calls on one ``frame`` (:class:`SearchCache`).
    suppression : {"star", "randomize"}
        ``"randomize"``: the cells the search suppresses are released through an LP channel
        instead of one ``*`` when that is met and keeps more I(X; Y) (:mod:`~._randomize`;
        ``result.suppression`` says which and why).

    Examples
    --------
    >>> df = pd.DataFrame({"s": list("ab") * 50, "x": list("pq") * 25 + list("qp") * 25})
    >>> r = find_release(df, "s", ["x"], epsilon=0.5, folds=0)
    >>> r.satisfied, r.max_log_lift <= 0.5
    (True, True)
    """
    options = SearchOptions(
        epsilon=epsilon, disclosure=disclosure, max_suppressed=max_suppressed, local=local,
        confidence=confidence, max_nodes=max_nodes, useful=useful, min_class_size=min_class_size,
    )  # fmt: skip
    sens = check_request(frame, sensitive, observed, options, folds, held_out_tolerance)
    check_suppression(suppression, useful)
    space, row_of = _space(
        frame, sens, observed, hierarchies, options, folds, counts_column, rng, cache
    )
    releases = Releases(
        space, options, folds, held_out_tolerance, rng, aim,
        extra=(options.epsilon, *(frontier_epsilons or ())),
    )  # fmt: skip
    chosen = releases.at(options.epsilon)
    found, reasons = chosen.found, chosen.reasons
    protection = table_protection(space.table, options.epsilon, options.disclosure)
    frontier = frontier_points(releases, frontier_epsilons, options.epsilon)
    wanted = suggest and bool(reasons)
    alternatives = _advice(releases, frontier, wanted)
    result = _result(frame, observed, row_of, found, frontier, reasons, alternatives)
    result.per_value = protection
    result.held_out_verdict = held_out_verdict(found.held, held_out_tolerance)
    if suppression == "randomize":
        _randomize(result, frame, observed, row_of, found, folds, held_out_tolerance, rng)
        reasons = result.reasons
    if reasons:
        warnings.warn("; ".join(reasons), ReleaseNotMetWarning, stacklevel=2)
    return result


def _randomize(
    result: ReleaseResult,
    frame: pd.DataFrame,
    observed: Sequence[str],
    row_of: IntArray,
    found: Searched,
    folds: int,
    tolerance: float,
    rng: int,
) -> None:
    """Release the suppressed cells through the LP channel (:mod:`~._randomize`) when it is met
    and keeps more; the result's release, figures and verdict become the channel's."""
    sc = randomize_suppression(
        found.fitter.space, found.fit.plan, found.options, frame, list(observed), row_of,
        folds=folds, tolerance=tolerance, seed=rng, star_held=found.held,
        star_reasons=result.reasons, protection=result.per_value,
    )  # fmt: skip
    result.suppression = sc
    if not sc.randomized:
        return
    result.released = sc.released
    result.information_nats = sc.information_nats
    result.held_out = sc.held_out
    result.held_out_verdict = sc.verdict
    result.reasons = list(sc.reasons)
    result.satisfied = not sc.reasons
    result.alternatives = [] if result.satisfied else result.alternatives
    result.max_log_lift = sc.worst_log_lift_in_sample
    result.suppressed_records = int((sc.released == SUPPRESSED).all(axis=1).sum())
    result.perturbed_records = sc.altered_records


def _advice(
    releases: Releases, frontier: list[dict[str, Any]], wanted: bool
) -> list[dict[str, Any]]:
    """The ``alternatives`` of a release that is not met (:mod:`~._alternatives`): each the
    release the audit publishes at its settings (:class:`~._frontier.Releases`), so that its
    ``args`` reproduce it and one at a frontier epsilon is that frontier point."""
    if not wanted:
        return []
    return [a.to_dict() for a in suggest_alternatives(releases, frontier=frontier)]


def _space(
    frame: pd.DataFrame,
    sens: Sequence[str],
    observed: Sequence[str],
    hierarchies: Mapping[str, str | Path | Hierarchy] | None,
    options: SearchOptions,
    folds: int,
    counts_column: str | None,
    rng: int,
    cache: SearchCache | None,
) -> tuple[ReleaseSpace, IntArray]:
    """The count table of ``frame`` (:func:`~._counting.count_space`), or the one ``cache``
    already holds for the same records and counting settings."""

    def build(n_folds: int) -> tuple[ReleaseSpace, IntArray]:
        keys = None if cache is None else cache.keys  # the table factorised once (engine route)
        return count_space(
            frame, sens, observed, hierarchies, options, n_folds, counts_column, rng, keys
        )

    if cache is None:
        return build(folds)
    hier = tuple(
        (c, h if isinstance(h, str | Path) else id(h)) for c, h in (hierarchies or {}).items()
    )
    key = (tuple(sens), tuple(observed), hier, options.useful, counts_column, rng)
    return cache.space(key, frame, folds, build)


def _result(
    frame: pd.DataFrame,
    observed: Sequence[str],
    row_of: IntArray,
    found: Searched,
    frontier: list[dict[str, Any]],
    reasons: list[str],
    alternatives: list[dict[str, Any]],
) -> ReleaseResult:
    """Assemble the result: the release labelled onto the records, with its figures."""
    fitter, fit, held = found.fitter, found.fit, found.held
    space, options, plan = fitter.space, fitter.options, fit.plan
    total = space.table.total()
    worst, by_group = in_sample_check(space, fitter.box, plan, options)
    sens = space.table.sensitive
    names = ["joint" if len(sens) > 1 else sens[0], *(sens if len(sens) > 1 else [])]
    per_tuple = per_tuple_table(space, plan, total, fitter.box)
    released, records, mapping = record_tables(frame, observed, per_tuple, row_of)
    return ReleaseResult(
        satisfied=not reasons,
        reasons=reasons,
        alternatives=alternatives,
        epsilon=options.epsilon,
        disclosure=options.disclosure,
        max_suppressed=options.max_suppressed,
        method=plan.kind,
        generalisation=fit.generalisation(space),
        information_nats=kept_information(space, plan),
        information_global_nats=fit.information_global,
        information_local_nats=fit.information_local,
        information_input_nats=input_information(space),
        suppressed_records=round(plan.suppressed_records(total)),
        perturbed_records=0,
        n_records=space.table.n_records,
        max_log_lift=worst,
        max_log_lift_by_attribute={k: float(v) for k, v in zip(names, by_group, strict=True)},
        held_out=held,
        confidence=options.confidence,
        unique_records=unique_records(space, plan, total),
        frontier=frontier,
        nodes_evaluated=fit.nodes_evaluated,
        search_complete=fit.nodes_evaluated < options.max_nodes,
        released=released,
        records=records,
        hierarchies=dict(zip(space.table.observed, space.hierarchies, strict=True)),
        mapping=mapping,
    )
