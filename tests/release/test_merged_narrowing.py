"""The watchdog's ladder narrows its kept set before it merges everything (#41 item 6): on a
population with a 1 %-share value and two-sided epsilon 1, the first credible margin flags every
tuple (the value's lower face needs hundreds of records), so the ladder went from an
inconclusive plug-in release straight to one keeping nothing; a narrowed rung keeps the safest
tuples of a rung and is judged by the same held-out check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privwatch.release.merged import KEPT_SHARES, Rung, TupleUnits, merge_to_pass

TOLERANCE = 0.05


def _draw(n: int, seed: int) -> pd.DataFrame:
    """120 tuples of three columns, p(s | x) within half of epsilon 1 of p(s) = (0.69, 0.30,
    0.01) for each (truth 0 for every partition), tuple masses spread."""
    rng = np.random.default_rng(1000 + seed)
    shape = np.random.default_rng(7)
    px = shape.lognormal(0, 1.0, 120)
    px /= px.sum()
    u = shape.uniform(-0.35, 0.35, (120, 2))
    post = np.column_stack([0.69 * np.ones(120), 0.30 * np.exp(u[:, 0]), 0.01 * np.exp(u[:, 1])])
    post /= post.sum(1, keepdims=True)
    x = rng.choice(120, n, p=px)
    s = (rng.random(n)[:, None] > np.cumsum(post[x], 1)).sum(1)
    return pd.DataFrame({"a": x // 24, "b": (x // 6) % 4, "c": x % 6, "s": s})


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_the_ladder_narrows_the_plug_in_rung_where_the_margin_keeps_nothing(seed: int) -> None:
    units = TupleUnits.count(_draw(3000, seed), ["s"], ["a", "b", "c"], 5, seed)
    first = merge_to_pass(units, 1.0, "both", tolerance=TOLERANCE, rng=seed, aim=False)
    found = merge_to_pass(units, 1.0, "both", tolerance=TOLERANCE, rng=seed)
    assert not first.satisfied and first.information_nats > 0  # plug-in: inconclusive
    assert found.tried[1]["confidence"] == 0.9 and found.tried[1]["information_nats"] <= 1e-9
    # before: the release keeping nothing was the answer; now a narrowed plug-in rung
    assert found.rung == Rung(None, 0.0, found.rung.kept_share)
    assert found.rung.kept_share in KEPT_SHARES
    assert found.satisfied and found.information_nats > 0
    assert found.held is not None and found.held.breach_probability_ci[1] <= TOLERANCE
    assert not any(t["met"] for t in found.tried[:-1])
    assert found.tried[-1]["kept_share"] == found.rung.kept_share
    size = units.table.total().sum(1)
    assert not (found.keep & ~first.keep).any()  # a subset of the plug-in's kept set ...
    assert size[found.keep].sum() <= found.rung.kept_share * size[first.keep].sum()  # ... within
