"""The learned watchdog's held-out verdict (issue #41 item 3): a 95 % interval from the
cross-fitted lift model, NOT MET where the truth is far above the tolerance, and continuous
columns accepted without `force` when the log-lift is learned."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privwatch import audit
from privwatch.audit._prepare import prepare_rows
from privwatch.estimators import learned_breach, margin_flags
from privwatch.exceptions import ValidationError


def _mixture(n: int, seed: int, sep: float = 0.35, share: float = 0.3) -> pd.DataFrame:
    """s ~ Bernoulli(share); x | s ~ N(s * sep * 1, I_4): a known Gaussian mixture."""
    g = np.random.default_rng(seed)
    s = (g.random(n) < share).astype(int)
    x = g.standard_normal((n, 4)) + s[:, None] * sep
    return pd.DataFrame(x, columns=[f"x{i}" for i in range(4)]).assign(s=s)


def _run(df: pd.DataFrame, **options: object) -> audit.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit.run(
            source=df, sensitive="s", estimator="quadratic_logistic", checks=False, **options
        )


def test_learned_watchdog_reports_a_held_out_interval() -> None:
    r = _run(_mixture(3000, 1), epsilon=0.5)
    held = r.leakage["held_out"]
    lo, hi = held["breach_probability_ci"]
    assert 0.0 <= lo <= held["breach_probability"] <= hi <= 1.0
    assert hi > lo  # an interval, not a point
    assert r.leakage["guarantee"]["tolerance"] == pytest.approx(0.05)
    assert (r.leakage["status"] == "met") == (hi <= 0.05)
    labels = dict(r.rows())
    assert "held-out breach probability" in labels


def test_learned_watchdog_not_met_where_the_marker_breaks() -> None:
    """One-sided at epsilon 0.5 with a 30 % value: only that value's lift can exceed epsilon
    (log(1 / 0.7) = 0.36 for the other), so every flagged record is pulled towards it and the
    merged marker's true lift breaks epsilon; its share of the population (a third or more of
    the records here) is the true breach share, far above twice the tolerance."""
    r = _run(_mixture(3000, 2, sep=0.8), epsilon=0.5, disclosure="positive")
    held = r.leakage["held_out"]
    assert r.leakage["status"] == "not_met"
    assert held["marker_breach_probability"] > 0.99
    assert held["breach_probability_ci"][0] > 0.10
    assert any("breach, confirmed" in reason for reason in r.leakage["reasons"])


def test_margin_flags_grow_with_the_margin() -> None:
    g = np.random.default_rng(0)
    ll = g.normal(0, 0.5, size=(500, 2))
    sd = np.full_like(ll, 0.1)
    counts = [margin_flags(ll, sd, 0.5, "both", c).sum() for c in (None, 0.9, 0.99)]
    assert counts[0] <= counts[1] <= counts[2]
    codes = (g.random(500) < 0.5).astype(np.int64)
    held = learned_breach(ll, sd, margin_flags(ll, sd, 0.5), codes, 0.5, rng=1)
    again = learned_breach(ll, sd, margin_flags(ll, sd, 0.5), codes, 0.5, rng=1)
    assert held == again  # seeded


def test_continuous_columns_accepted_without_force_when_learned() -> None:
    df = _mixture(200, 3)
    frame, cols, _, _ = prepare_rows(df, "s", None, learned=True)
    assert cols == ["x0", "x1", "x2", "x3"] and len(frame) == 200
    with pytest.raises(ValidationError, match="distinct value in every record"):
        prepare_rows(df, "s", None)  # plug-in counts: still refused
    ids = df.assign(record=np.arange(200))  # a record number stays an identifier
    with pytest.raises(ValidationError, match=r"\['record'\]"):
        prepare_rows(ids, "s", None, learned=True)


def test_audit_accepts_continuous_columns_without_force() -> None:
    r = _run(_mixture(1000, 4), epsilon=1.0)
    assert r.leakage["held_out"] is not None
