"""Suppression counted honestly: a record released as ``*`` in every observed column counts as
suppressed, whichever step did it (the suppressed cell, a global node at the top level, local
recoding, a hierarchy with ``*`` below its top level), and ``max_suppressed`` bounds that total."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch import PrivwatchError
from privwatch.release import Hierarchy, ReleaseNotMetWarning, ReleaseResult, find_release
from privwatch.release.cells import CountTable, LiftBox
from privwatch.release.search import SearchOptions
from privwatch.release.search._global_recoding import Plan, ReleaseSpace
from privwatch.release.search._lattice import evaluate_node, search_global
from privwatch.release.search._one_search import in_sample_check


def _all_star(r: ReleaseResult) -> int:
    """Records released as ``*`` in every observed column, counted from the release itself."""
    return int((r.released.astype(str) == "*").all(axis=1).sum())


def _worst_lift(frame: pd.DataFrame, released: pd.DataFrame, sensitive: str) -> float:
    """Worst two-sided log-lift of the released cells, recomputed with a pandas group-by."""
    key = released.astype(str).agg("\x1f".join, axis=1)
    ct = pd.crosstab(key, frame[sensitive].astype(str)).to_numpy(dtype=float)
    prior = ct.sum(0) / ct.sum()
    with np.errstate(divide="ignore"):
        return float(np.abs(np.log(ct / ct.sum(1, keepdims=True) / prior)).max())


def _release(df: pd.DataFrame, observed: list[str], **kw: Any) -> ReleaseResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        return find_release(df, "s", observed, folds=0, suggest=False, frontier_epsilons=[], **kw)


def _two_level(values: list[str], column: str) -> Hierarchy:
    """A hierarchy with the original values and ``*`` only."""
    return Hierarchy(column, tuple(values), (tuple(values), tuple("*" for _ in values)))


def _peeling_table() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """A table on which local recoding from the all-``*`` root peels off a1 and a2 and leaves a3
    and a4 (40 % of the records) all-``*``: a3 is all "yes", a4 all "no", and c, independent of
    s overall, tells s apart inside a3 | a4. The best global recoding releases c alone."""
    rows = [
        *[("a3", "c1", "yes")] * 200,
        *[("a4", "c2", "no")] * 200,
    ]
    for a in ("a1", "a2"):  # 300 each: s balanced, c1 mostly "no" (so c is independent overall)
        rows += [(a, "c1", "yes")] * 25 + [(a, "c1", "no")] * 125
        rows += [(a, "c2", "yes")] * 125 + [(a, "c2", "no")] * 25
    df = pd.DataFrame(rows, columns=["a", "c", "s"])
    hier = {
        "a": _two_level(["a1", "a2", "a3", "a4"], "a"),
        "c": _two_level(["c1", "c2"], "c"),
    }
    return df, hier


def test_local_recoding_counts_its_all_star_records_within_the_bound() -> None:
    df, hier = _peeling_table()
    r = _release(df, ["a", "c"], epsilon=0.1, hierarchies=hier, max_suppressed=0.05)
    # before: local recoding released 400 records (40 %) as '*' past max_suppressed=0.05
    assert r.suppressed_records == _all_star(r)
    assert r.suppressed_records <= 0.05 * len(df)
    assert r.information_nats > 0.5 and r.satisfied
    assert _worst_lift(df, r.released, "s") <= 0.1 + 1e-9
    assert bool(r.records["suppressed"].sum() == r.suppressed_records)
    # with room for them, a3 | a4 may be released as '*' (more information), and is counted
    roomy = _release(df, ["a", "c"], epsilon=0.1, hierarchies=hier, max_suppressed=0.5)
    assert roomy.information_nats > r.information_nats
    assert roomy.suppressed_records == _all_star(roomy) == 400
    assert _worst_lift(df, roomy.released, "s") <= 0.1 + 1e-9


@pytest.mark.parametrize("local", [True, False])
def test_an_all_star_release_reports_every_record_suppressed(local: bool) -> None:
    # s is a function of x and of y: only the all-'*' release meets a small epsilon
    df = pd.DataFrame({"s": list("ab") * 50, "x": list("pq") * 50, "y": list("uv") * 50})
    r = _release(df, ["x", "y"], epsilon=0.1, local=local)
    assert set(r.released.stack()) == {"*"}
    assert r.suppressed_records == len(df) == _all_star(r)
    assert bool(r.records["suppressed"].all()) and not r.satisfied


def test_a_class_labelled_star_below_the_top_counts_against_the_bound() -> None:
    """A hierarchy may label a value ``*`` below its top level: that class is the suppressed
    cell, so it counts against ``max_suppressed`` and merges with it."""
    h = Hierarchy("x", ("p", "q", "r"), (("p", "q", "r"), ("pq", "pq", "*"), ("*", "*", "*")))
    df = pd.DataFrame({"x": list("pqr") * 40, "s": list("ab") * 60})
    table, _ = CountTable.from_frame(df, ["s"], ["x"], {"x": h})
    space = ReleaseSpace(table, {"x": h})
    total = table.total()
    box = LiftBox(total.sum(0), table.marginals(), 0.5, "both")
    share_r = 1 / 3
    _, tight = evaluate_node(space, (1,), total, box, share_r - 0.01)
    assert tight is None  # the '*' class (x = r) alone exceeds the bound
    _, loose = evaluate_node(space, (1,), total, box, share_r + 0.01)
    assert loose is not None
    assert loose.suppressed_share == pytest.approx(share_r)
    assert loose.plan.suppressed_records(total) == pytest.approx(40)
    best, _ = search_global(space, total, box, share_r - 0.01)
    assert best.levels == (0,) and best.plan.suppressed_records(total) == 0


def test_the_bundled_compas_audit_stays_within_its_bound() -> None:
    """The bundled COMPAS audit (its release does not depend on the held-out folds: folds=0
    keeps the test short)."""
    import privwatch.audit as audit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = audit.run(source=audit.Bundled("compas"), epsilon=0.92, checks=False, folds=0)
    found = a.found
    assert found is not None and found.information_nats > 0
    assert found.suppressed_records == _all_star(found)
    assert found.suppressed_records <= found.max_suppressed * found.n_records


def test_the_in_sample_check_refuses_an_uncounted_or_oversized_suppression() -> None:
    h = Hierarchy("x", ("p", "q"), (("p", "q"), ("*", "*")))
    df = pd.DataFrame({"x": list("pq") * 50, "s": list("aabb") * 25})  # s independent of x
    table, _ = CountTable.from_frame(df, ["s"], ["x"], {"x": h})
    space = ReleaseSpace(table, {"x": h})
    box = LiftBox(table.total().sum(0), table.marginals(), 0.5, "both")
    options = SearchOptions(epsilon=0.5, max_suppressed=0.05)
    top = np.ones((2, 1), dtype=np.int64)
    with pytest.raises(PrivwatchError, match="not counted as suppressed"):
        in_sample_check(space, box, Plan(top, np.zeros(2, dtype=bool)), options)
    in_sample_check(space, box, space.plan(top, np.zeros(2, dtype=bool)), options)  # all '*'
    half = space.plan(np.array([[0], [1]]), np.zeros(2, dtype=bool))  # q (50 %) released '*'
    assert half.suppressed.tolist() == [False, True]
    with pytest.raises(PrivwatchError, match="past max_suppressed"):
        in_sample_check(space, box, half, options)
    in_sample_check(space, box, half, options.replace(max_suppressed=0.5))
