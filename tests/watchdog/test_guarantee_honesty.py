"""The watchdog's reported guarantee is true for the records it describes (issue #15 fixes)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from privwatch import Watchdog
from privwatch.measures import log_lift


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    x = np.where(rng.random(n) < 0.6, s * 3 + rng.integers(0, 3, n), rng.integers(0, 6, n))
    return pd.DataFrame({"s": s, "x": x.astype(str)})


def _released_level(df: pd.DataFrame, release: pd.DataFrame) -> float:
    p = pd.crosstab(df["s"], release["x"].astype(str)).to_numpy(dtype=float)
    return float(np.nanmax(np.abs(log_lift(p / p.sum()))))


def test_smoothing_does_not_overstate_the_guarantee() -> None:
    df = _table(300, 0)
    wd = Watchdog(epsilon=0.4, smoothing=5.0, sensitive="s", observed=["x"]).fit(df)
    # the reported level is the exact level of the released records, not of the smoothed pmf
    assert math.isclose(
        wd.guarantee_.effective_epsilon, _released_level(df, wd.transform(df)), rel_tol=1e-9
    )
    smoothed = Watchdog(epsilon=0.4, smoothing=5.0, sensitive="s", observed=["x"]).fit(df).joint_.p
    assert not math.isclose(
        float(np.nanmax(np.abs(log_lift(smoothed)))), wd.guarantee_.effective_epsilon
    )


def test_gamma_is_not_claimed_where_its_premise_fails() -> None:
    wd = Watchdog(epsilon=0.8, sensitive="s", observed=["x"]).fit(_table(400, 3))
    held = wd.evaluate(_table(400, 13))
    assert (
        held.guarantee.effective_epsilon > 0.8
    )  # on held-out records a released symbol breaks 0.8
    assert math.isinf(held.gamma_bound)


def test_epsilon_zero_does_not_count_float_noise_as_breach() -> None:
    from privwatch.watchdog import relaxed_watchdog

    p = np.array([[0.1, 0.2, 0.03], [0.3, 0.6, 0.09]])  # S independent of X: every lift is 1
    r = relaxed_watchdog(p / p.sum(), 0.0, 0.5)
    assert r.breach_probability == 0.0 and r.keep.all()
