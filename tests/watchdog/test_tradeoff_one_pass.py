"""The watchdog tradeoff curve in one pass (issue #42 item 2) against its per-threshold
definition: at each threshold, the release keeping {risk <= epsilon} with the flagged symbols
merged, its utility (``_utility``), levels (``_effective_level``), gamma bound (``_gamma``) and
breach probability (``_breach``), and ``leakage_report`` of its joint.

The eight watchdog columns are compared bit for bit (the curve computes the same sums); the
leakage report's columns within 1e-12 relative to the value or to 1, whichever is larger (the
one pass sums in another order: see ``tests/measures/test_nested_reports.py``). Joints: random
ones with ties in risk, zero columns and rows, one column and infinite risks; COMPAS and a
census-like table, on the audit's own 40-point grid (``propose_epsilon``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from privwatch.audit import propose_epsilon
from privwatch.datasets import COMPAS_OBSERVED, load_compas
from privwatch.measures import leakage_report
from privwatch.watchdog import tradeoff
from privwatch.watchdog._bounds import _gamma
from privwatch.watchdog._mechanism import _effective_level, _utility
from privwatch.watchdog._partition import _symbol_risk
from privwatch.watchdog._relaxed import _breach
from privwatch.watchdog._table import release_joint
from tests.release._reference_venvs import census_like

WATCHDOG = ("threshold", "utility_mi", "nmil", "gamma_bound", "effective_epsilon",
            "randomized_epsilon", "flagged_probability", "breach_probability")  # fmt: skip


def _per_threshold(p: np.ndarray, grid: list[float], alpha: float) -> pd.DataFrame:
    """The curve as it was computed before the one pass: every threshold on its own."""
    risk = _symbol_risk(p)
    p_x = p.sum(axis=0)
    rows = []
    for eps in grid:
        keep = risk <= eps
        util = _utility(p_x, keep)
        randomized, effective = _effective_level(p, keep, risk)
        row = dict(zip(WATCHDOG, (eps, util.utility_mi, util.nmil, _gamma(p_x, keep, eps),
                                  effective, randomized, util.flagged_probability,
                                  _breach(p, keep, eps)), strict=True))  # fmt: skip
        report = leakage_report(release_joint(p, keep), alpha=alpha).to_dict()
        row.update({f"release_{k}": v for k, v in report.items() if k not in ("base", "alpha")})
        rows.append(row)
    return pd.DataFrame(rows)


def _assert_same_curve(p: np.ndarray, grid: list[float], alpha: float = 2.0) -> None:
    got = tradeoff(p, grid, alpha=alpha).to_frame()
    want = _per_threshold(p, grid, alpha)
    assert list(got.columns) == list(want.columns)
    for name in got.columns:
        for i, (g, w) in enumerate(zip(got[name], want[name], strict=True)):
            where = f"{name}[{i}] (threshold {grid[i]}, alpha {alpha})"
            if name in WATCHDOG or not math.isfinite(w):
                assert g == w or (math.isnan(g) and math.isnan(w)), f"{where}: {g!r} != {w!r}"
            else:
                assert abs(g - w) <= 1e-12 * max(abs(w), 1.0), f"{where}: {g!r} != {w!r}"


def test_random_joints_with_ties_zeros_and_infinite_risks() -> None:
    g = np.random.default_rng(3)
    for _ in range(80):
        s, x = int(g.integers(1, 6)), int(g.integers(1, 30))
        p = g.dirichlet(np.full(s * x, g.choice([0.1, 1.0, 10.0]))).reshape(s, x)
        if g.random() < 0.5:
            p[g.random((s, x)) < 0.15] = 0.0  # infinite risks
        if g.random() < 0.3 and x > 2:
            p[:, g.integers(0, x)] = 0.0  # a zero column
        if g.random() < 0.2 and s > 1:
            p[g.integers(0, s)] = 0.0  # a zero row
        if g.random() < 0.4 and x > 3:
            p[:, 1] = p[:, 2] = p[:, 0]  # tied risks
        if p.sum() == 0:
            p[0, 0] = 1.0
        p /= p.sum()
        risk = _symbol_risk(p)
        top = float(risk[np.isfinite(risk)].max(initial=1.0))
        grid = [*g.uniform(0, top * 1.2, int(g.integers(1, 10))), 0.0, math.inf]
        grid += [float(v) for v in g.choice(risk, 2)]  # thresholds on a risk: ties at the edge
        _assert_same_curve(p, grid, float(g.choice([2.0, 1.0, math.inf, 0.7, 5.0])))


def test_a_kept_symbol_that_breaches_after_an_underflow() -> None:
    """p(s) p(x) below the float range: the breach test's log-lift is inf while the risk
    ((p / p(x)) / p(s)) is finite, so a kept symbol breaches; the curve counts it as before."""
    p = np.array([[0.3, 0.2, 1e-200], [0.2, 0.3 - 3e-200, 1e-200], [0.0, 0.0, 1e-200]])
    with np.errstate(over="ignore"):
        _assert_same_curve(p / p.sum(), [0.0, 0.5, 460.0, math.inf])
        assert tradeoff(p / p.sum(), [460.0]).breach_probability[0] > 0


@pytest.mark.parametrize("table", ["compas", "census"])
def test_the_audit_grid_on_real_shaped_tables(table: str) -> None:
    if table == "compas":
        df, sensitive, observed = load_compas(), "race", COMPAS_OBSERVED
    else:
        df = census_like(20_000, np.random.default_rng(0))
        sensitive, observed = "race", ["age", "sex", "education", "marital", "hours"]
    counts = pd.crosstab(df[sensitive], [df[c] for c in observed]).to_numpy(dtype=float)
    joint = counts / counts.sum()
    _, _, curve = propose_epsilon(joint)
    assert joint.shape[1] > 500 and len(curve) == 40
    _assert_same_curve(joint, curve["threshold"].tolist())
