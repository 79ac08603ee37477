"""The lift test reused across searches (issue #42 item 3): a lattice node's mask is remembered
per counts and box and carried across credible levels (the broken set only grows with the
level), the plug-in test decides a node past the suppression limit without a Beta CDF, and the
narrow row reductions give numpy's bits. Every answer must equal the one computed afresh."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privwatch.release.cells import LiftBox, cell_counts, row_sums
from privwatch.release.search._lattice import evaluate_node, search_global
from tests.release._cases import logistic_space

LEVELS = (None, 0.9, 0.95, 0.975, 0.99)


def _cells(seed: int, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(k)) * 10_000 + 1
    sizes = np.concatenate([rng.integers(1, 40, 1500), rng.integers(200, 3000, 500)])
    shares = rng.dirichlet(prior / prior.sum() * 200 + 0.1, len(sizes))
    return prior, np.floor(shares * sizes[:, None].astype(float))


@pytest.mark.parametrize("disclosure", ["both", "positive"])
def test_masks_carried_across_levels_equal_fresh_ones(disclosure: str) -> None:
    prior, cells = _cells(3)
    boxes = {q: LiftBox(prior, [np.arange(3)], 0.3, disclosure, q) for q in LEVELS}
    fresh = {q: boxes[q].breaks(cells) for q in LEVELS}
    assert np.array_equal(boxes[0.9].breaks_plugin(cells), fresh[None])
    # the broken set grows with the level, strictly somewhere, so carrying can go wrong
    for lo, hi in itertools.pairwise(LEVELS):
        assert not (fresh[lo] & ~fresh[hi]).any()
    assert (fresh[0.99] & ~fresh[None]).any()
    for i, q in enumerate(LEVELS[1:], start=1):
        below = np.logical_or.reduce([fresh[p] for p in LEVELS[:i]])
        above = [~fresh[p] for p in LEVELS[i + 1 :]]
        passing = np.logical_or.reduce(above) if above else None
        assert np.array_equal(boxes[q].breaks(cells, broken=below, passing=passing), fresh[q])
        assert np.array_equal(boxes[q].breaks(cells, passing=passing), fresh[q])


def test_row_sums_give_numpys_bits() -> None:
    rng = np.random.default_rng(0)
    for width in range(1, 11):
        values = rng.random((500, width)) * rng.integers(1, 10**6, (500, width))
        for arr in (values, np.asfortranarray(values)):
            assert np.array_equal(row_sums(arr), arr.sum(-1))
    cube = rng.random((4, 50, 3))
    assert np.array_equal(row_sums(cube), cube.sum(-1))


def _summary(result: object) -> tuple[object, ...]:
    if result is None:
        return (None,)
    return (
        result.levels,  # type: ignore[attr-defined]
        result.information,  # type: ignore[attr-defined]
        result.plan.suppressed.tobytes(),  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("disclosure", ["both", "positive"])
def test_remembered_node_tests_give_the_fresh_search(disclosure: str) -> None:
    """One space searched at every margin and suppression limit in a row (its masks carried)
    gives, node by node, the masks and releases a fresh space gives each search."""
    shared, total = logistic_space(1, 3000)
    nodes = list(itertools.product(*[range(int(k)) for k in shared.n_levels]))
    released = carried = 0
    for q, sup in itertools.product((None, 0.95, 0.9, 0.99, 0.975), (0.05, 0.2)):
        box = LiftBox(total.sum(0), shared.table.marginals(), 0.5, disclosure, q)
        fresh, _ = logistic_space(1, 3000)
        a, ea = search_global(shared, total, box, sup)
        b, eb = search_global(fresh, total, box, sup)
        assert (_summary(a), ea) == (_summary(b), eb)
        for node in nodes:
            cell_of, n_cells = shared.node_cells(node)
            ct = cell_counts(cell_of, n_cells, total)
            want_mask = box.breaks(ct)
            assert np.array_equal(shared.memo.node_breaks(node, "k", box, ct), want_mask)
            carried += bool((want_mask & ~box.breaks_plugin(ct)).any())
            got = evaluate_node(shared, node, total, box, sup, counts_key="k")
            want = evaluate_node(fresh, node, total, box, sup)
            assert got[0] == want[0] and _summary(got[1]) == _summary(want[1])
            released += got[1] is not None
    # nodes are released and cells break on their margin alone, so the comparisons can fail
    assert released > 0 and carried > 0


def test_remembered_node_counts_follow_the_counts() -> None:
    """A node's cell counts, sizes and bound are remembered per counts: one space evaluating
    its nodes under two different count arrays in turn gives what a fresh space gives."""
    shared, total = logistic_space(2, 3000)
    table = shared.table
    box = LiftBox(total.sum(0), table.marginals(), 0.5, "both", None)
    nodes = list(itertools.product(*[range(int(k)) for k in shared.n_levels]))
    train = table.total(exclude_fold=0) if table.counts.shape[2] > 1 else np.floor(total / 2)
    assert not np.array_equal(train, total)
    for _ in range(2):
        for counts, key in ((total, "all"), (train, "train")):
            fresh, _ = logistic_space(2, 3000)
            for node in nodes:
                got = evaluate_node(shared, node, counts, box, 0.05, counts_key=key)
                want = evaluate_node(fresh, node, counts, box, 0.05)
                assert got[0] == want[0] and _summary(got[1]) == _summary(want[1])
    assert len(shared.memo._counts) == 2 * len(nodes)


def test_node_counts_rolled_up_from_a_finer_node_are_the_fresh_sums() -> None:
    """A node's cell counts rolled up from a kept finer node (one level down in one column)
    are, bit for bit, the sums over its tuple rows; the roll-up is taken once the finer node is
    kept, and not before."""
    shared, total = logistic_space(3, 3000)
    box = LiftBox(total.sum(0), shared.table.marginals(), 0.5, "both", None)
    nodes = list(itertools.product(*[range(int(k)) for k in shared.n_levels]))
    assert shared.memo.finer_counts(nodes[-1], "k") is None
    rolled = 0
    for node in nodes:  # lexicographic: every finer neighbour comes first
        rolled += shared.memo.finer_counts(node, "k") is not None
        evaluate_node(shared, node, total, box, 0.05, counts_key="k")
        assert (node, "k") in shared.memo._counts
        ct, sizes, bound = shared.memo.node_counts(node, "k", lambda: pytest.fail("not kept"))
        assert not ct.flags.writeable and ct.dtype == np.float64
        cell_of, n_cells = shared.node_cells(node)
        want = cell_counts(cell_of, n_cells, total)
        assert ct.tobytes() == want.tobytes() and sizes.tobytes() == row_sums(want).tobytes()
        fresh, _ = logistic_space(3, 3000)
        assert evaluate_node(fresh, node, total, box, 0.05)[0] == bound
    assert rolled == len(nodes) - 1  # all but the finest node
