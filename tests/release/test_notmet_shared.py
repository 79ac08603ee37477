"""What the searches and checks of a NOT MET audit share (issue #42 item 3): the replicates'
Beta matching of all replicates at once, the local refinement's states across lift tests, and
the lattice searches whose nodes the plug-in test refuses at every credible level. Each must
give, bit for bit, what is computed afresh."""

from __future__ import annotations

import numpy as np
import pytest

from privwatch.release.cells import LiftBox
from privwatch.release.heldout._beta_match import beta_of_cells, betas_of_cells
from privwatch.release.search import _lattice, _local_recoding
from privwatch.release.search._global_recoding import ReleaseSpace
from privwatch.release.search._lattice import search_global
from privwatch.release.search._local_recoding import refine_locally
from tests.release._cases import logistic_space


def test_betas_of_all_replicates_are_each_replicates_bits() -> None:
    g = np.random.default_rng(1)
    for t in range(200):  # every tenth without rows (the unseen pseudo-tuple alone)
        rows = 0 if t % 10 == 0 else int(g.integers(1, 2000))
        reps, n_cells = int(g.integers(1, 22)), int(g.integers(1, 40))
        mean, var = g.random((rows, reps)), g.random((rows, reps)) * 0.02 * g.random()
        size = g.integers(1, 200, rows) * g.random(rows)
        cell_of = g.integers(0, n_cells, rows)
        cells = np.unique(g.integers(0, n_cells, int(g.integers(1, n_cells + 1))))
        extras = [
            (
                int(g.integers(0, n_cells)),
                float(g.random() * 9),
                float(g.random()),
                0.01 * g.random(),
            )
            for _ in range(reps)
        ]
        a, b = betas_of_cells(mean, var, size, cell_of, n_cells, extras, cells)
        for i in range(reps):
            want_a, want_b, _ = beta_of_cells(
                mean[:, i], var[:, i], size, cell_of, n_cells, extras[i]
            )
            assert want_a[cells].tobytes() == a[:, i].tobytes()
            assert want_b[cells].tobytes() == b[:, i].tobytes()


def _box(space: ReleaseSpace, total: np.ndarray, eps: float, q: float | None) -> LiftBox:
    return LiftBox(total.sum(0), space.table.marginals(), eps, "both", q)


@pytest.mark.parametrize("min_class_size", [1, 5])
def test_refinements_sharing_states_give_the_fresh_plans(
    monkeypatch: pytest.MonkeyPatch, min_class_size: int
) -> None:
    """The root refined under several lift tests on one space (its states kept) gives the
    plans a fresh space gives each, and the shared states spare the children's group-bys."""
    grouped = [0]
    children = _local_recoding._children

    def counted(*args: object) -> object:
        grouped[0] += 1
        return children(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_local_recoding, "_children", counted)
    shared, total = logistic_space(1, 4000)
    fresh_groupings = shared_groupings = 0
    plans = set()
    for eps, q in [(0.3, None), (0.3, 0.9), (0.3, 0.99), (0.15, None), (0.6, 0.95)]:
        fresh, _ = logistic_space(1, 4000)
        grouped[0] = 0
        want = refine_locally(fresh, fresh.root, total, _box(fresh, total, eps, q), min_class_size)
        fresh_groupings += grouped[0]
        grouped[0] = 0
        box = _box(shared, total, eps, q)
        got = refine_locally(shared, shared.root, total, box, min_class_size, b"root")
        shared_groupings += grouped[0]
        assert got.levels.tobytes() == want.levels.tobytes()
        assert got.suppressed.tobytes() == want.suppressed.tobytes()
        plans.add(got.levels.tobytes())
    assert len(plans) > 2  # the tests differ, so the states shared must not be taken too far
    assert shared_groupings < fresh_groupings


def _summary(result: object) -> tuple[object, ...]:
    return (
        result.levels,  # type: ignore[attr-defined]
        result.information,  # type: ignore[attr-defined]
        result.plan.suppressed.tobytes(),  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize(
    ("eps", "walked_again"),
    [(0.001, [False, False, False]), (0.5, [True, True, True])],
)
def test_searches_refused_at_every_level_give_the_fresh_ones(
    monkeypatch: pytest.MonkeyPatch, eps: float, walked_again: list[bool]
) -> None:
    """A search whose every node the plug-in test refuses is not walked again at the other
    credible levels (without a margin the test is the plug-in one): the same release and node
    count as a fresh search. A search that keeps a node is walked at every level."""
    calls = [0]
    evaluate = _lattice.evaluate_node

    def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return evaluate(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_lattice, "evaluate_node", counted)
    shared, total = logistic_space(2, 4000)
    walked = []
    for q in (None, 0.9, 0.95, 0.99):
        fresh, _ = logistic_space(2, 4000)
        want, n_want = search_global(fresh, total, _box(fresh, total, eps, q), 0.05)
        calls[0] = 0
        got, n_got = search_global(shared, total, _box(shared, total, eps, q), 0.05)
        walked.append(calls[0])
        assert (_summary(got), n_got) == (_summary(want), n_want)
        assert n_got > 1
    assert walked[0] > 1
    assert [w > 1 for w in walked[1:]] == walked_again  # else the top node alone


def test_beta_of_cells_without_rows_keeps_the_pseudo_tuples_moments() -> None:
    # only the unseen pseudo-tuple (no kept rows): its Beta has its mean and variance; numpy's
    # bincount of no rows is integer zeros, which once cast the pseudo-tuple's sums to integers
    empty = np.zeros(0)
    a, b, n = beta_of_cells(
        empty, empty, empty, np.zeros(0, dtype=np.int64), 2, extra=(1, 40.0, 0.03, 1e-4)
    )
    assert n[1] == 40.0
    assert a[1] / (a[1] + b[1]) == pytest.approx(0.03, rel=1e-9)
    var = a[1] * b[1] / ((a[1] + b[1]) ** 2 * (a[1] + b[1] + 1))
    assert var == pytest.approx(1e-4, rel=1e-9)
