"""``min_class_size`` (K): every released cell but the suppressed one holds at least K records, in
every search (global recoding, local recoding, the held-out folds' fits); unique records
(k = 1) are counted for the findings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch import ValidationError
from privwatch.release import auto_hierarchy, classic_report
from privwatch.release.search import SearchOptions
from privwatch.release.search._counting import count_space
from privwatch.release.search._one_search import Fitter, in_sample_check
from privwatch.release.search._per_tuple import per_tuple_table, record_tables, unique_records


def _table(seed: int = 0, n: int = 400) -> pd.DataFrame:
    """A table with many unique records: four observed columns, 6 x 5 x 4 x 3 = 360 tuples."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 6, n),
            "b": rng.choice(list("pqrst"), n),
            "c": rng.integers(0, 4, n),
            "d": rng.choice(list("xyz"), n),
        }
    )
    logit = 0.3 * df["a"] - 1.0 + (df["b"] == "p") * 0.8
    df["s"] = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return df


def _search(df: pd.DataFrame, **options: Any) -> tuple[pd.DataFrame, int, int]:
    """Search with ``options`` as find_release does: the released observed values of every
    record, the records suppressed and the unique records."""
    observed = list("abcd")
    hier = {c: auto_hierarchy(df[c], c) for c in observed}
    o = SearchOptions(**options)
    space, row_of = count_space(df, ["s"], observed, hier, o, 0, None, 0)
    fitter = Fitter(space, o)
    total = space.table.total()
    fit = fitter.fit(total)
    in_sample_check(space, fitter.box, fit.plan, o)  # raises on a cell below K
    per_tuple = per_tuple_table(space, fit.plan, total, fitter.box)
    released, _, _ = record_tables(df, observed, per_tuple, row_of)
    sup = round(fit.plan.suppressed_records(total))
    return released, sup, unique_records(space, fit.plan, total)


def _k_without_star(df: pd.DataFrame, released: pd.DataFrame) -> int:
    """Classic k-anonymity of the release, the suppressed cell (every column '*') left out: it
    tells nothing of its records' observed values, and K exempts it."""
    star = (released.astype(str) == "*").all(axis=1)
    kept = released[~star].assign(s=df["s"][~star].to_numpy())
    return int(classic_report(kept, list("abcd"), "s").table["k_anonymity"])


def _worst_lift(df: pd.DataFrame, released: pd.DataFrame, disclosure: str) -> float:
    """Worst log-lift of the released cells, recomputed with a pandas group-by."""
    key = released.astype(str).agg("\x1f".join, axis=1)
    ct = pd.crosstab(key, df["s"]).to_numpy(dtype=float)
    prior = ct.sum(0) / ct.sum()
    with np.errstate(divide="ignore"):
        ll = np.log(ct / ct.sum(1, keepdims=True) / prior)
    return float(np.abs(ll).max() if disclosure == "both" else ll.max())


@pytest.mark.parametrize("local", [True, False])
@pytest.mark.parametrize(
    ("disclosure", "epsilon"), [("both", 0.7), ("both", 1.0), ("positive", 1.0)]
)
def test_every_released_cell_holds_k_records(local: bool, disclosure: str, epsilon: float) -> None:
    df = _table()
    kw: dict[str, Any] = {"epsilon": epsilon, "disclosure": disclosure, "local": local}
    plain, _, _ = _search(df, **kw)
    assert _k_without_star(df, plain) < 5  # without K the release has smaller cells
    released, sup, unique = _search(df, **kw, min_class_size=5)
    assert _k_without_star(df, released) >= 5
    assert unique == 0
    assert sup <= 0.05 * len(df)
    assert _worst_lift(df, released, disclosure) <= epsilon + 1e-9  # the '*' cell included
    # a useful release remains: not every record is '*'
    assert (released.astype(str) != "*").any(axis=1).sum() >= 0.95 * len(df)


def test_unique_records_count_the_cells_of_one_record() -> None:
    """One-sided lift privacy lets a cell of one record through (two-sided it would have a
    lift of 0 for the other value); :func:`unique_records` counts them, not the '*' cell."""
    df = _table(1)
    released, _, unique = _search(df, epsilon=1.0, disclosure="positive", local=False)
    sizes = released.astype(str).agg("\x1f".join, axis=1).value_counts()
    star = "\x1f".join("*" * 4)
    assert unique == int((sizes[sizes.index != star] == 1).sum()) > 0
    _, _, none_left = _search(df, epsilon=1.0, disclosure="positive", min_class_size=2)
    assert none_left == 0


def test_min_class_size_must_be_a_positive_int() -> None:
    assert SearchOptions(epsilon=1.0).min_class_size == 1
    assert SearchOptions(epsilon=1.0, min_class_size=np.int64(5)).min_class_size == 5
    for bad in (0, -2, 2.5, True, "5", None):
        with pytest.raises(ValidationError, match="min_class_size"):
            SearchOptions(epsilon=1.0, min_class_size=bad)
    assert SearchOptions(epsilon=1.0).replace(min_class_size=3).arguments()["min_class_size"] == 3
