"""Statistical tests of every release mechanism's promise (issue #19, the diffprivlib pattern).

Each test samples a mechanism many times (seeded, so CI is deterministic) and checks the
empirical quantity against the guarantee with an exact binomial or Hoeffding bound. Every single
check has a false-alarm probability of at most ``ALPHA = 1e-6`` if the mechanism keeps its
promise; a test with ``m`` checks is Bonferroni-corrected (each at ``ALPHA / m``), so each test
fails wrongly with probability at most 1e-6.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privwatch import Watchdog
from privwatch.datasets import random_joint
from privwatch.measures import bayes_error, lift_epsilon
from privwatch.mechanisms import (
    PlanarLaplace,
    optimal_bayes_mechanism,
    optimal_privacy_mechanism,
)

ALPHA = 1e-6


def _binomial_consistent(k: int, n: int, p0: float, alpha: float) -> bool:
    """Two-sided exact binomial test of k successes in n against probability p0."""
    return bool(stats.binomtest(k, n, p0).pvalue >= alpha)


def _hoeffding(n: int, width: float, alpha: float) -> float:
    """One-sided Hoeffding deviation of a mean of n values in an interval of ``width``."""
    return width * math.sqrt(math.log(1 / alpha) / (2 * n))


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 7.5])
def test_planar_laplace_radius_law(epsilon: float) -> None:
    """Radii follow Gamma(2, 1/epsilon): P(r <= t) = 1 - (1 + eps t) e^{-eps t}."""
    mech = PlanarLaplace(epsilon)
    n = 200_000
    z = mech.release(np.zeros((n, 2)), rng=19)
    r = np.hypot(z[:, 0], z[:, 1])
    ts = np.array([0.25, 0.5, 1.0, 2.0, 4.0, 8.0]) / epsilon
    checks = len(ts) + 4
    for t in ts:
        cdf = 1 - (1 + epsilon * t) * math.exp(-epsilon * t)
        assert _binomial_consistent(int((r <= t).sum()), n, cdf, ALPHA / checks), t
    quadrant = (z[:, 0] > 0) * 2 + (z[:, 1] > 0)
    for q in range(4):  # the angle is uniform
        assert _binomial_consistent(int((quadrant == q).sum()), n, 0.25, ALPHA / checks)
    assert abs(r.mean() - mech.expected_distortion) <= 6 * math.sqrt(6 / epsilon**2 / n) + 1e-12


def test_planar_laplace_geo_indistinguishability() -> None:
    """For every region A: P(Z in A | x) <= e^{eps d(x, x')} P(Z in A | x'); checked on a half
    plane and an annulus with the exact binomial upper/lower bounds of both frequencies."""
    eps, d = 0.5, 2.0
    mech = PlanarLaplace(eps)
    n = 200_000
    zx = mech.release(np.zeros((n, 2)), rng=1)
    zy = mech.release(np.tile([d, 0.0], (n, 1)), rng=2)
    regions: list[Callable[[np.ndarray], np.ndarray]] = [
        lambda z: z[:, 0] < -3.0,
        lambda z: np.hypot(z[:, 0], z[:, 1]) < 0.5,
        lambda z: (z[:, 0] > 1.0) & (z[:, 1] > 1.0),
    ]
    a = ALPHA / (2 * len(regions))
    for region in regions:
        kx, ky = int(region(zx).sum()), int(region(zy).sum())
        lo_x = stats.beta.ppf(a, kx, n - kx + 1) if kx else 0.0  # Clopper-Pearson lower
        hi_y = stats.beta.ppf(1 - a, ky + 1, n - ky) if ky < n else 1.0  # upper
        assert lo_x <= math.exp(eps * d) * hi_y
        lo_y = stats.beta.ppf(a, ky, n - ky + 1) if ky else 0.0
        hi_x = stats.beta.ppf(1 - a, kx + 1, n - kx) if kx < n else 1.0
        assert lo_y <= math.exp(eps * d) * hi_x


@pytest.mark.parametrize("seed", [0, 1])
def test_watchdog_release_lift_and_cells(seed: int) -> None:
    """The watchdog's release of a table: (a) the promise it states,
    ``guarantee_.effective_epsilon`` (the
    lift epsilon of the released joint on the fit table's plug-in pmf; Hsu et al.: the flagged
    block is randomized, so this can exceed the requested epsilon), holds exactly; (b) its
    ``uniform`` randomization, sampled on 80,000 records, gives cell counts consistent with that
    exact released joint."""
    p = random_joint(2, 5, rng=seed, concentration=0.7)
    rng = np.random.default_rng(100 + seed)
    n = 80_000
    cells = rng.choice(p.size, size=n, p=p.ravel())
    s, x = np.divmod(cells, p.shape[1])
    table = pd.DataFrame({"x": x, "s": s})
    eps = 0.4
    wd = Watchdog(epsilon=eps, sensitive="s", randomization="uniform", rng=seed).fit(table)
    released = np.asarray(wd.transform(table[["x"]])["x"].astype(int))
    p_hat = np.zeros(p.shape)
    np.add.at(p_hat, (s, x), 1.0 / n)
    from privwatch.watchdog import watchdog_channel

    keep = ~wd.flag(pd.DataFrame({"x": np.arange(p.shape[1])}))
    k = np.eye(p.shape[1])
    if (~keep).any():
        k[np.ix_(~keep, ~keep)] = 1.0 / (~keep).sum()
        k[~keep] = np.where(np.isin(np.arange(p.shape[1]), np.flatnonzero(~keep)), k[~keep], 0)
    q = p_hat @ k
    assert lift_epsilon(q) <= wd.guarantee_.effective_epsilon + 1e-9
    assert np.allclose(watchdog_channel(p_hat, eps, "uniform"), k)
    counts = np.zeros(p.shape)
    np.add.at(counts, (s, released), 1.0)
    # given s and x, the release is drawn independently: test each cell of the flagged block
    checks = int((q > 0).sum())
    for si in range(p.shape[0]):
        n_s = int((s == si).sum())
        for y in range(p.shape[1]):
            prob = q[si, y] / q[si].sum()
            assert _binomial_consistent(int(counts[si, y]), n_s, prob, ALPHA / checks), (si, y)


def test_optimal_bayes_mechanism_promise() -> None:
    """Distortion within budget (Hoeffding) and no attacker beats the Bayes error it promises:
    a MAP attacker fitted on 100,000 samples errs on 100,000 fresh ones at least as often as
    the promise allows (exact binomial lower bound)."""
    prior = np.array([[0.2, 0.1, 0.0, 0.1], [0.0, 0.15, 0.3, 0.15]])
    dist = np.abs(np.subtract.outer(np.arange(4.0), np.arange(4.0)))
    budget = 0.6
    res = optimal_bayes_mechanism(prior, dist, budget)
    k = res.channel()
    rng = np.random.default_rng(7)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cells = rng.choice(prior.size, size=n, p=prior.ravel())
        s, w = np.divmod(cells, prior.shape[1])
        u = rng.random(n)
        z = (np.cumsum(k[w], axis=1) < u[:, None]).sum(axis=1)
        return s, w, np.minimum(z, k.shape[1] - 1)

    n = 100_000
    s, w, z = draw(n)
    assert dist[w, z].mean() <= budget + _hoeffding(n, float(dist.max()), ALPHA / 2)
    table = np.zeros((prior.shape[0], k.shape[1]))
    np.add.at(table, (s, z), 1)
    guess = table.argmax(axis=0)
    s2, _, z2 = draw(n)
    errors = int((guess[z2] != s2).sum())
    promised = res.bayes_error
    assert promised == pytest.approx(bayes_error((prior.T[:, :, None] * k[:, None, :]).sum(0).T))
    assert stats.binom.cdf(errors, n, promised) >= ALPHA / 2


def test_optimal_privacy_mechanism_distortion_promise() -> None:
    p = np.zeros((3, 3, 3))  # p[s, x, u]
    for i in range(3):
        p[i, i, i] = 0.2
    p[1, 0, 2] = p[0, 2, 1] = 0.2
    d = 1 - np.eye(3)
    delta = 0.45
    res = optimal_privacy_mechanism(p, d, delta)
    rng = np.random.default_rng(3)
    n = 100_000
    cells = rng.choice(p.size, size=n, p=p.ravel())
    _, w, y = np.unravel_index(cells, p.shape)
    u = rng.random(n)
    z = np.minimum((np.cumsum(res.channel()[w], axis=1) < u[:, None]).sum(axis=1), 2)
    assert d[y, z].mean() <= delta + _hoeffding(n, 1.0, ALPHA)


@pytest.mark.parametrize(("disclosure", "seed"), [("both", 0), ("positive", 1)])
def test_release_per_value_promise(disclosure: str, seed: int) -> None:
    """The release search's promise about each sensitive value (``per_value``, issue 32): in
    every released cell, the share of each value lies within [belief_min, belief_max]; the
    bounds are the closed form of lift privacy at the data's shares; a value is protected
    exactly when its bound is below 1. Exact (in-sample), so no statistical slack."""
    p = random_joint(3, 12, rng=seed, concentration=0.8)  # p[s, x]
    rng = np.random.default_rng(seed)
    n = 3_000
    cells = rng.choice(p.size, size=n, p=p.ravel())
    s, x = np.divmod(cells, p.shape[1])
    frame = pd.DataFrame({"s": [f"v{v}" for v in s], "a": x // 4, "b": x % 4})
    eps = 0.6
    from privwatch.release import ReleaseNotMetWarning, find_release

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        found = find_release(frame, "s", ["a", "b"], epsilon=eps, disclosure=disclosure, folds=0)
    assert found.information_nats > 0
    shares = frame["s"].value_counts(normalize=True)
    rows = {r["value"]: r for r in found.per_value}
    assert set(rows) == set(shares.index)
    for value, r in rows.items():
        prior = shares[value]
        assert r["share"] == pytest.approx(prior)
        top = prior * math.exp(eps)
        if disclosure == "both":
            top = min(top, 1 - (1 - prior) * math.exp(-eps))
            assert r["belief_min"] == pytest.approx(prior * math.exp(-eps))
        else:
            assert r["belief_min"] is None
        assert r["belief_max"] == pytest.approx(min(1.0, top))
        assert r["protected"] == (top < 1.0)
    released = found.released[["a", "b"]].astype(str).agg("|".join, axis=1)
    table = pd.crosstab(released.to_numpy(), frame["s"].to_numpy(), normalize="index")
    for value, r in rows.items():
        assert (table[value] <= r["belief_max"] + 1e-9).all(), value
        if r["belief_min"] is not None:
            assert (table[value] >= r["belief_min"] - 1e-9).all(), value


def test_a_guarantee_that_protects_nobody_is_never_met() -> None:
    """One-sided lift privacy with p(s) e^epsilon >= 1 for every value bounds no belief below
    certainty: such a release is never met, whatever its held-out figures (issue 32)."""
    from privwatch.release import ReleaseNotMetWarning, find_release

    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {"s": rng.choice(["a", "b"], 600, p=[0.6, 0.4]), "x": rng.integers(0, 4, 600)}
    )
    with pytest.warns(ReleaseNotMetWarning, match="protects no"):
        found = find_release(frame, "s", ["x"], epsilon=1.5, disclosure="positive", folds=3)
    assert min(r["share"] for r in found.per_value) * math.exp(1.5) >= 1  # the premise
    assert found.information_nats > 0  # it keeps information: the protection is why
    assert not found.satisfied and not any(r["protected"] for r in found.per_value)
    assert all(r["belief_max"] == 1.0 for r in found.per_value)
