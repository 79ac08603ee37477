"""Cases shared by the release tests: a count table with folds for the held-out model's fits,
a count table of given counts spread over folds and the held-out figures of a release of it,
the check that two sets of fits are the same to the bit, and a search space on a logistic
population."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from privwatch.release.cells import CountTable, LiftBox
from privwatch.release.heldout import HeldOut, estimate_breach
from privwatch.release.hierarchies import auto_hierarchy
from privwatch.release.search._global_recoding import ReleaseSpace


def fold_table(rng: np.random.Generator) -> CountTable:
    """Up to 30 tuples of two columns, a three-valued s (shares 0.6 / 0.3 / 0.1) and 4 folds."""
    codes = np.unique(np.stack([rng.integers(0, 6, 900), rng.integers(0, 5, 900)], axis=1), axis=0)
    records = rng.integers(1, 9, (len(codes), 4))  # per tuple and fold
    counts = rng.multinomial(records, np.array([0.6, 0.3, 0.1])).transpose(0, 2, 1)
    return CountTable(("x", "y"), ("s",), codes, counts.astype(float), [("a",), ("b",), ("c",)])


def spread_table(
    counts: np.ndarray, codes: np.ndarray, folds: int = 5, seed: int = 0
) -> CountTable:
    """A count table whose records (counts[t, s]) are spread over ``folds`` at random."""
    rng = np.random.default_rng(seed)
    per_fold = np.zeros((*counts.shape, folds))
    for t, s in np.ndindex(counts.shape):
        per_fold[t, s] = np.bincount(rng.integers(0, folds, int(counts[t, s])), minlength=folds)
    values = [(f"v{i}",) for i in range(counts.shape[1])]
    return CountTable(("x",), ("s",), codes, per_fold, values)


def grid_codes(n_tuples: int) -> np.ndarray:
    """Two observed columns' codes of ``n_tuples`` distinct tuples."""
    return np.stack([np.arange(n_tuples) % 7, np.arange(n_tuples) // 7], axis=1)


def release_figures(
    table: CountTable, cell_of: np.ndarray, epsilon: float, seed: int = 0
) -> HeldOut:
    """Held-out figures of the release ``cell_of`` (the same cells in every fold), two-sided;
    cell 0 is taken as the all-``*`` cell."""
    box = LiftBox(table.total().sum(0), table.marginals(), epsilon, "both")
    n_cells = int(cell_of.max()) + 1
    folds = [(cell_of, n_cells)] * table.counts.shape[2]
    return estimate_breach(
        table,
        box,
        folds,
        (cell_of, n_cells, 0),
        (0.0, 0.0, table.n_records),
        draws=1000,
        replicates=10,
        rng=np.random.default_rng(seed),
    )


def assert_same_fits(first: list[tuple[Any, Any]], second: list[tuple[Any, Any]]) -> None:
    """Two lists of (value model, its draws) equal to the bit, and their generators in the
    same state (the draws go on from the same state)."""
    for (a, da), (b, db) in zip(first, second, strict=True):
        assert a.column == b.column
        for x, y in ((a.fitted.alpha, b.fitted.alpha), (a.fitted.eta, b.fitted.eta),
                     (a.scores, b.scores), (a.mean, b.mean), (a.var, b.var)):  # fmt: skip
            np.testing.assert_array_equal(x, y)
        assert [d[0] for d in da] == [d[0] for d in db]
        for (_, x), (_, y) in zip(da, db, strict=True):
            np.testing.assert_array_equal(x, y)
        assert a.rng.random() == b.rng.random()


def logistic_space(seed: int, n: int) -> tuple[ReleaseSpace, np.ndarray]:
    """The release space of n records (columns a, b, c; s yes / no by a logistic model in a and
    b), with automatic hierarchies, and its total counts."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"a": rng.integers(0, 8, n), "b": rng.choice(list("pqrstu"), n), "c": rng.integers(0, 5, n)}
    )
    logit = 0.5 * df["a"] - 2.0 + (df["b"] == "p") * 1.5
    df["s"] = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    hier = {c: auto_hierarchy(df[c], c) for c in "abc"}
    table, _ = CountTable.from_frame(df, ["s"], list("abc"), hier)
    return ReleaseSpace(table, hier), table.total()
