"""The held-out interval's guard against a G the records cannot identify
(``release/heldout/_identified.py``, issue #41 item 6, the calibration setting ``gross``):
where the records do not reject "every tuple breaks", the one-tuple cells are judged again under
the gap prior and the upper end is at least theirs; where they reject it, nothing is drawn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privwatch.release.heldout._breach import GAP_NOTE
from privwatch.release.heldout._identified import gap_outside, gap_prior
from privwatch.release.heldout._prior import PRIOR_CANDIDATES, fit_candidate, stratum_of
from privwatch.release.merged import TupleUnits, merge_to_pass
from tests.release._cases import grid_codes, release_figures, spread_table

EPSILON = 0.4
BOUNDS = (0.5 * np.exp(-EPSILON), 1 - 0.5 * np.exp(-EPSILON))  # s at 1/2, two-sided


def _fit(k: np.ndarray, n: np.ndarray):  # type: ignore[no-untyped-def]
    codes = np.zeros((len(k), 0), dtype=np.int64)  # no observed columns: eta the intercept
    rough = next(c for c in PRIOR_CANDIDATES if np.isinf(c.ridge) and c.penalty < 1)
    return fit_candidate(rough, k, n, codes, 0.5, np.random.default_rng(0))


def test_sparse_spikes_outside_the_box_are_not_rejected() -> None:
    # 3,000 tuples of one to three records, each share 0.31 or 0.69 (log-lift 0.48 > 0.4):
    # the counts cannot show that no share lies inside the box
    rng = np.random.default_rng(1)
    n = rng.integers(1, 4, 3_000).astype(float)
    theta = rng.choice([0.31, 0.69], len(n))
    k = rng.binomial(n.astype(int), theta).astype(float)
    gaps = gap_prior(_fit(k, n), BOUNDS)
    assert gaps is not None
    # a tuple kept for its counts (8 of 16, inside the box) breaks for sure under the gap prior
    p = gap_outside(gaps, np.array([8.0]), np.array([16.0]), np.array([0.0]), BOUNDS)
    assert p[0] > 0.999


def test_shares_inside_the_box_reject_it_and_shares_outside_do_not() -> None:
    # 400 tuples of 30-60 records: the counts show where the shares lie
    rng = np.random.default_rng(2)
    n = rng.integers(30, 61, 400).astype(float)
    assert (stratum_of(n) == 3).all()
    inside = rng.binomial(n.astype(int), rng.uniform(0.42, 0.58, len(n))).astype(float)
    assert gap_prior(_fit(inside, n), BOUNDS) is None
    # the same tuples with every share 0.31 or 0.69: "every tuple breaks" is what they show
    spikes = rng.binomial(n.astype(int), rng.choice([0.31, 0.69], len(n))).astype(float)
    gaps = gap_prior(_fit(spikes, n), BOUNDS)
    assert gaps is not None and gaps.priors[3].sum() == pytest.approx(1.0)


def _gross_frame(records: int, seed: int) -> pd.DataFrame:
    """Records of a population whose every tuple's share of s is 0.31 or 0.69 (s at 1/2)."""
    rng = np.random.default_rng(seed)
    sizes = (12, 12, 10)
    grid = np.stack(np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij"), -1).reshape(-1, 3)
    px = rng.lognormal(0, 1.2, len(grid))
    share = rng.choice([0.31, 0.69], len(grid))
    rows = rng.choice(len(grid), records, p=px / px.sum())
    frame = pd.DataFrame({f"c{j}": [f"v{v}" for v in grid[rows, j]] for j in range(3)})
    frame["s"] = np.where(rng.random(records) < share[rows], "a", "b")
    return frame


@pytest.mark.parametrize("seed", [0, 1])
def test_watchdog_keeps_tuples_that_break_and_the_interval_says_so(seed: int) -> None:
    frame = _gross_frame(3_000, seed)
    units = TupleUnits.count(frame, ["s"], ["c0", "c1", "c2"], 5, seed)
    found = merge_to_pass(units, EPSILON, "both", tolerance=0.05, rng=seed)
    held = found.held
    assert held is not None and found.keep.any()
    assert held.interval.endswith(GAP_NOTE)
    # every kept tuple truly breaks: the true breach share is the kept tuples' mass, which the
    # upper end must reach. Under the gap prior every kept tuple breaks for sure and the guard
    # weighs the cells by their records alone, so its 97.5 % quantile is above the kept
    # records' share (the unseen pseudo-tuple, about 11 % of these records, shrinks the fitted
    # masses by n / (n + N1); the test below shows the difference where N1 is larger)
    n = units.table.total().sum(1)
    kept_share = float(n[found.keep].sum() / n.sum())
    assert held.breach_probability_ci[1] >= kept_share


@pytest.mark.slow
def test_randomized_release_one_tuple_symbols_are_judged_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from privwatch.release.heldout import _channel
    from privwatch.release.randomized import randomize_release

    frame = _gross_frame(3_000, 0)

    def release():  # type: ignore[no-untyped-def]
        done = randomize_release(frame, "s", ["c0", "c1", "c2"], EPSILON, folds=5, seed=0)
        return done.held_out

    guarded = release()
    assert guarded is not None and guarded.interval.endswith(GAP_NOTE)
    monkeypatch.setattr(_channel, "gap_upper", lambda *args: None)
    plain = release()
    assert plain is not None and not plain.interval.endswith(GAP_NOTE)
    # the same release and draws; only the upper end rises, by the one-tuple symbols' breaches
    assert guarded.breach_probability == plain.breach_probability
    assert guarded.breach_probability_ci[0] == plain.breach_probability_ci[0]
    assert guarded.breach_probability_ci[1] > plain.breach_probability_ci[1]


def test_the_guard_weighs_the_cells_by_their_records_alone() -> None:
    # 12 tuples of 20 records at 7 or 13 of 20 (just inside the box: the records cannot tell
    # them from shares at 0.31 / 0.69) kept alone, and 600 tuples seen once merged into '*'
    # (cell 0): Good-Turing's unseen pseudo-tuple adds 600 records to '*', so the fitted
    # check's cells weigh n / (n + N1) = 0.58 of their records' share. Under the gap prior the
    # kept tuples break for sure, and the guard weighs them by their records: its upper end is
    # above the kept records' share, 0.286 (the diluted masses alone put it near 0.19)
    rng = np.random.default_rng(5)
    big = np.array([[7.0, 13.0], [13.0, 7.0]] * 6)
    counts = np.concatenate([big, np.eye(2)[rng.integers(0, 2, 600)]])
    table = spread_table(counts, grid_codes(len(counts)), seed=5)
    held = release_figures(table, np.concatenate([np.arange(1, 13), np.zeros(600, int)]), EPSILON)
    assert held.interval.endswith(GAP_NOTE)
    assert held.unseen_share == pytest.approx(600 / 1440)
    assert held.breach_probability_ci[1] >= 240 / 840
