"""The fixed part's shortcuts give the same answers as the plain computations (issue #42 item 2).

- local recoding evaluates only the partitions split in the previous round, forms children
  only from the rows that can move down, and (whole counts) takes a remainder as its
  partition's counts less its valid children: the same plan as evaluating every partition
  over every row each round (the reference below, the algorithm before the shortcuts);
- a hierarchy and its codes built from a column's distinct values equal the row-by-row ones;
- the prior's ``distinct`` equals ``np.unique(axis=0)``'s first occurrences and inverse.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch.release import auto_hierarchy
from privwatch.release.cells import LiftBox, cell_counts, entropy_terms, group_rows
from privwatch.release.heldout._prior import distinct
from privwatch.release.hierarchies import _hierarchy
from privwatch.release.search import SearchOptions
from privwatch.release.search._counting import count_space
from privwatch.release.search._global_recoding import Plan, ReleaseSpace, cell_information
from privwatch.release.search._lattice import search_global
from privwatch.release.search._local_recoding import refine_locally


def _reference_splits(
    space: ReleaseSpace, part: Any, n_parts: int, levels: Any, done: Any, counts: Any,
    box: LiftBox, total: float, k: int,
) -> tuple[Any, list[Any]]:  # fmt: skip
    """Every partition, every row, remainders summed over their rows."""
    least = k - 1e-9 if k > 1 else 0.0
    exempt = np.ones(n_parts, dtype=bool)
    if k > 1:
        exempt = cell_counts(part, n_parts, space.all_star(levels).astype(float)) > 0
    before = cell_information(space, part, n_parts, counts, total)
    best_gain, best_col = np.zeros(n_parts), np.full(n_parts, -1)
    to_child = []
    for j in range(levels.shape[1]):
        finer = levels[:, j] - 1
        ok = (finer >= 0) & ~done[:, j]
        label = np.where(ok, space.tables[j][np.maximum(finer, 0), space.table.codes[:, j]], -1)
        child, n_child = group_rows(np.stack([part, label], axis=1))
        ct = cell_counts(child, n_child, counts)
        size = ct.sum(1)
        child_ok = cell_counts(child, n_child, ok.astype(float)) > 0
        valid = child_ok & (size > 0) & (size >= least) & ~box.breaks(ct)
        row_valid = valid[child]
        to_child.append(row_valid)
        rest = cell_counts(part, n_parts, counts * ~row_valid[:, None])
        rest_size = rest.sum(1)
        rest_ok = (rest_size <= 0) | (~box.breaks(rest) & ((rest_size >= least) | exempt))
        any_valid = cell_counts(part, n_parts, row_valid.astype(float)) > 0
        if space.table.useful is None:
            after = entropy_terms(np.concatenate([np.where(valid, size, 0.0), rest_size]), total)
        else:
            cell = np.where(row_valid, child, n_child + part)
            after = cell_information(space, cell, n_child + n_parts, counts, total)
        owner = np.empty(n_child + n_parts, dtype=np.int64)
        owner[child], owner[n_child:] = part, np.arange(n_parts)
        gain = np.bincount(owner, weights=after, minlength=n_parts) - before
        gain = np.where(rest_ok & any_valid, gain, -np.inf)
        better = gain > np.maximum(best_gain, 1e-12)
        best_gain, best_col = np.where(better, gain, best_gain), np.where(better, j, best_col)
    return best_col, to_child


def _reference_refine(space: ReleaseSpace, start: Plan, counts: Any, box: LiftBox, k: int) -> Plan:
    total = float(counts.sum())
    levels = start.levels.copy()
    levels[start.suppressed] = space.n_levels - 1
    part, n_parts = group_rows(space.keys(levels, None))
    done = np.zeros(levels.shape, dtype=bool)
    while True:
        best_col, to_child = _reference_splits(
            space, part, n_parts, levels, done, counts, box, total, k
        )
        col_of_row = best_col[part]
        split_row = col_of_row >= 0
        if not split_row.any():
            break
        rows = np.flatnonzero(split_row)
        j_rows = col_of_row[rows]
        goes = np.stack(to_child)[j_rows, rows]
        levels[rows[goes], j_rows[goes]] -= 1
        done[rows[goes]] = False
        done[rows[~goes], j_rows[~goes]] = True
        moved = np.zeros(part.size, dtype=np.int64)
        moved[rows[goes]] = 1
        key = np.concatenate(
            [
                np.stack([part, split_row.astype(np.int64), moved], axis=1),
                np.where(moved[:, None] == 1, space.keys(levels), -1),
            ],
            axis=1,
        )
        part, n_parts = group_rows(key)
    return space.plan(levels, np.zeros(levels.shape[0], dtype=bool), "local")


def _census(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": g.integers(18, 80, n),
            "job": g.choice([f"j{i}" for i in range(9)], n),
            "zip": g.integers(0, 40, n).astype(object),
            "edu": g.choice(list("abcdef"), n),
            "u": g.choice(list("xyz"), n),
        }
    )
    logit = 0.04 * (df["age"] - 40) + (df["job"] == "j1") * 1.2 - (df["zip"].astype(int) < 5)
    df["s"] = np.where(g.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return df


@pytest.mark.parametrize(
    "options",
    [
        {"epsilon": 0.7},
        {"epsilon": 0.4, "min_class_size": 5},
        {"epsilon": 0.9, "useful": "u"},
        {"epsilon": 0.6, "disclosure": "positive", "confidence": 0.8},
    ],
)
@pytest.mark.parametrize("scale", [1.0, 0.37])  # whole counts, and not (the summed remainder)
def test_local_recoding_same_plan_as_every_row_every_round(
    options: dict[str, Any], scale: float
) -> None:
    df = _census(1500, 3)
    observed = ["age", "job", "zip", "edu"]
    o = SearchOptions(max_suppressed=0.2, **options)
    space, _ = count_space(df, ["s"], observed, None, o, 0, None, 0)
    counts = space.table.total() * scale
    box = LiftBox(counts.sum(0), space.table.marginals(), o.epsilon, o.disclosure, o.confidence)
    best, _ = search_global(space, counts, box, o.max_suppressed, min_class_size=o.min_class_size)
    n_rows = counts.shape[0]
    root = space.plan(np.tile(space.n_levels - 1, (n_rows, 1)), np.ones(n_rows, dtype=bool))
    refined_any = False
    for start in (best.plan, root):
        got = refine_locally(space, start, counts, box, o.min_class_size)
        want = _reference_refine(space, start, counts, box, o.min_class_size)
        assert np.array_equal(got.levels, want.levels)
        assert np.array_equal(got.suppressed, want.suppressed)
        refined_any |= not np.array_equal(want.levels, start.levels)
    assert refined_any  # the comparison covers real refinements


def test_hierarchy_from_distinct_values_equals_row_by_row(monkeypatch: Any) -> None:
    g = np.random.default_rng(1)
    n = 5000
    columns = {
        "objint": pd.Series(g.integers(0, 50, n)).astype(object),
        "int": pd.Series(g.integers(-5, 500, n)),
        "str": pd.Series([f"v{x}" for x in g.integers(0, 30, n)], dtype=object),
    }
    for weights in (None, g.integers(1, 100, n).astype(float)):
        for name, values in columns.items():
            assert _hierarchy.distinct_values(values) is not None  # the shortcut is taken
            fast = auto_hierarchy(values, name, weights=weights)
            fast_codes = fast.codes(values)
            with monkeypatch.context() as m:
                m.setattr(_hierarchy, "distinct_values", lambda v, *keys: None)
                slow = auto_hierarchy(values, name, weights=weights)
                slow_codes = slow.codes(values)
            assert fast == slow and fast.labels == slow.labels
            assert np.array_equal(fast_codes, slow_codes)


@pytest.mark.parametrize(
    "values",
    [
        [1, True, 1.0, 2, "a"],  # hash-equal values with different texts
        [0.0, -0.0, 1.5],
        ["a", None, "b"],
    ],
)
def test_distinct_values_refuses_what_it_cannot_do_exactly(values: list[Any]) -> None:
    assert _hierarchy.distinct_values(pd.Series(values * 10, dtype=object)) is None


def test_prior_distinct_equals_unique_rows() -> None:
    g = np.random.default_rng(0)
    k = g.poisson(3, 20_000).astype(float)
    n = k + g.poisson(9, 20_000)
    eta = np.concatenate([g.normal(size=19_996) * 0.7, [0.0, -0.0, 1e-9, -1e-9]])
    key = np.stack([k, n, np.round(eta / 0.01)], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    got_first, got_inverse = distinct(k, n, eta, 0.01)
    assert np.array_equal(got_first, first)
    assert np.array_equal(got_inverse, inverse.reshape(-1))
