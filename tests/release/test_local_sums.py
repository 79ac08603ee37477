"""Local recoding's column-wise sums (issue #42): the packed pairs of whole counts give the
figures :func:`cell_counts` gives, bit for bit, and refining with or without the packing
gives the same plan."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privwatch.release import auto_hierarchy
from privwatch.release.cells import cell_counts
from privwatch.release.search import SearchOptions, _local_recoding
from privwatch.release.search._counting import count_space
from privwatch.release.search._local_recoding import _pack, _sums
from privwatch.release.search._one_search import Fitter


@pytest.mark.parametrize("n_cols", [1, 2, 3, 4, 5])
def test_packed_sums_are_cell_counts(n_cols: int) -> None:
    g = np.random.default_rng(n_cols)
    n = 5000
    counts = g.integers(0, 2**11, (n, n_cols)).astype(float)
    counts[g.random(n) < 0.01] = 0.0
    counts[0, 0] = 2.0**26 - 1 - (counts.sum() - counts[0, 0])  # the largest total packed
    assert counts.min() >= 0 and counts.sum() == 2.0**26 - 1
    cell = g.integers(0, 40, n)
    want = cell_counts(cell, 40, counts)
    cols = np.ascontiguousarray(counts.T)
    packed = _pack(cols) if n_cols > 1 else cols
    assert packed.shape[0] == (n_cols + 1) // 2
    got = _sums(cell, 40, packed, n_cols)
    assert got.tobytes() == want.tobytes()
    assert _sums(cell, 40, cols, n_cols).tobytes() == want.tobytes()


@pytest.mark.parametrize("min_class_size", [1, 3])
def test_refinement_same_without_packing(
    monkeypatch: pytest.MonkeyPatch, min_class_size: int
) -> None:
    rng = np.random.default_rng(7)
    n = 3000
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 6, n),
            "b": rng.choice(list("pqrst"), n),
            "c": rng.integers(0, 4, n),
        }
    )
    df["s"] = rng.choice(["u", "v", "w"], n, p=[0.5, 0.3, 0.2])
    df.loc[df["a"] == 5, "s"] = "u"  # a column worth splitting on
    observed = list("abc")
    hier = {c: auto_hierarchy(df[c], c) for c in observed}
    o = SearchOptions(epsilon=0.4, min_class_size=min_class_size, local=True)
    space, _ = count_space(df, ["s"], observed, hier, o, 0, None, 0)
    box = Fitter(space, o).box
    total = space.table.total()
    root = space.plan(
        np.tile(space.n_levels - 1, (total.shape[0], 1)), np.ones(total.shape[0], bool)
    )
    packed = _local_recoding.refine_locally(space, root, total, box, min_class_size)
    assert (packed.levels < space.n_levels - 1).any()  # the refinement split something
    monkeypatch.setattr(_local_recoding, "_PACK", 0.0)  # no total is below it: no packing
    plain = _local_recoding.refine_locally(space, root, total, box, min_class_size)
    assert packed.levels.tobytes() == plain.levels.tobytes()
    assert packed.suppressed.tobytes() == plain.suppressed.tobytes()
