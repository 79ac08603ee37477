"""``nested_leakage_reports``: every measure of a nested family of merged releases in one pass,
against :func:`leakage_report` of each release on its own (issue #42 item 2, the tradeoff
curve).

The one pass sums the columns' terms in another order than the per-release report (and its
masses exactly rounded), so the two agree up to rounding, not bit for bit: within 1e-12
relative to the value or to 1 (nats, probabilities), whichever is larger. The absolute part is
the per-release report's own rounding: it gives a Bayes leakage of 2.2e-16 or 0.0 for releases
whose MAP guess is the prior's, and on wide tables its sums carry absolute errors of 1e-13
(1.8e-13 for Arimoto's information of the 4 x 20,000 table below, measured against long-double
arithmetic, where the one pass is within 1e-15: BENCHMARKS.md "#42 item 2, fifth pass"). The
wide table is therefore also checked against a long-double evaluation, tightly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privwatch.exceptions import ValidationError
from privwatch.measures import leakage_report, nested_leakage_reports

RTOL, ATOL = 1e-12, 1e-12
ALPHAS = (2.0, 1.0, math.inf, 0.7, 1.3, 5.0, 0.2)


def _release(p: np.ndarray, order: np.ndarray, k: int) -> np.ndarray:
    """The merged release the per-release report is computed on (as ``release_joint``)."""
    keep = np.zeros(p.shape[1], dtype=bool)
    keep[order[:k]] = True
    merged = p[:, ~keep].sum(axis=1, keepdims=True)
    q = np.hstack([p[:, keep], merged]) if (~keep).any() else p[:, keep]
    return np.asarray(q / q.sum())


def _assert_close(
    got: dict[str, float | None], want: dict[str, float | None], where: str, atol: float = ATOL
) -> None:
    for name, w in want.items():
        g = got[name]
        if not isinstance(w, float) or not isinstance(g, float) or math.isinf(w):
            assert g == w, f"{where} {name}: {g!r} != {w!r}"
            continue
        assert abs(g - w) <= RTOL * abs(w) + atol, f"{where} {name}: {g!r} != {w!r}"


def _random_joint(g: np.random.Generator) -> np.ndarray:
    """A pmf with, at random: zero cells (infinite risk), a zero column, a zero row, tied
    columns, a column proportional to the sensitive marginal (risk 0), one column only."""
    s, x = int(g.integers(1, 6)), int(g.integers(1, 40))
    p = g.dirichlet(np.full(s * x, g.choice([0.1, 1.0, 10.0]))).reshape(s, x)
    if g.random() < 0.5:
        p[g.random((s, x)) < 0.15] = 0.0
    if g.random() < 0.3 and x > 2:
        p[:, g.integers(0, x)] = 0.0
    if g.random() < 0.2 and s > 1:
        p[g.integers(0, s)] = 0.0
    if g.random() < 0.3 and x > 3:
        p[:, 1] = p[:, 2] = p[:, 0]
    if g.random() < 0.2:
        p[:, -1] = p.sum(axis=1) * 0.3
    if p.sum() == 0:
        p[0, 0] = 1.0
    return np.asarray(p / p.sum())


def test_every_report_equals_the_per_release_report_on_random_joints() -> None:
    g = np.random.default_rng(42)
    for trial in range(200):
        p = _random_joint(g)
        n = p.shape[1]
        order = g.permutation(n)
        kept = g.integers(0, n + 1, size=int(g.integers(1, 8)))  # unsorted, repeated, 0 and n
        alpha = float(g.choice(ALPHAS))
        found = nested_leakage_reports(p, order, kept, alpha=alpha)
        assert len(found) == len(kept)
        for k, report in zip(kept, found, strict=True):
            want = leakage_report(_release(p, order, int(k)), alpha=alpha).to_dict()
            assert report.to_dict().keys() == want.keys()
            _assert_close(report.to_dict(), want, f"trial {trial} k={k} alpha={alpha}")


def _long_double_report(q: np.ndarray) -> dict[str, float]:
    """The measures of a release (alpha 2) in long double (64-bit significand on x86)."""
    q = q.astype(np.longdouble)
    q = q / q.sum()
    p_s, p_x = q.sum(axis=1), q.sum(axis=0)
    lift = q / p_s[:, None] / p_x[None, :]
    cond = q / p_s[:, None]
    guess = q.max(axis=0).sum()
    found = {
        "mutual_information": np.sum(q * np.log(lift)),
        "sibson_mi": 2 * np.log(np.sum(np.sqrt(np.sum(p_s[:, None] * cond**2, axis=0)))),
        "arimoto_mi": 2 * np.log(np.sum(np.sqrt(np.sum(q**2, axis=0))) / np.sqrt(np.sum(p_s**2))),
        "maximal_leakage": np.log(cond.max(axis=0).sum()),
        "chi2_information": np.sum(p_s[:, None] * p_x[None, :] * (lift - 1) ** 2),
        "tv_information": np.sum(p_s[:, None] * p_x[None, :] * np.abs(lift - 1)) / 2,
        "guessing_probability": guess,
        "bayes_leakage": np.log(guess / p_s.max()),
        "lift_epsilon": max(np.log(lift.max()), -np.log(lift.min())),
    }
    return {k: float(v) for k, v in found.items()}


def test_a_wide_nearly_independent_table_matches_too() -> None:
    """Many columns and small informations (the shape of the 10^8 folded table): the summed
    merged column and the sensitive marginal must stay consistent to the last bits."""
    g = np.random.default_rng(7)
    counts = g.poisson(260, size=(4, 20_000)).astype(float)
    p = counts / counts.sum()
    order = g.permutation(p.shape[1])
    kept = np.array([0, 1, 50, 700, 5_000, 12_345, 19_999, 20_000])
    wide = np.finfo(np.longdouble).nmant >= 63
    for k, report in zip(kept, nested_leakage_reports(p, order, kept), strict=True):
        release = _release(p, order, int(k))
        _assert_close(report.to_dict(), leakage_report(release).to_dict(), f"k={k}")
        if wide:  # the one pass against exact arithmetic: within a few units of 1e-16
            _assert_close(report.to_dict(), _long_double_report(release), f"k={k}", 2e-15)


def test_overflowing_lifts_take_the_per_release_reports() -> None:
    """A lift beyond the float range (marginals of 1e-305) is left to leakage_report's
    log-domain paths: the same values bit for bit."""
    p = np.array([[0.5, 0.5 - 1e-305, 0.0], [0.0, 0.0, 1e-305]])
    order = np.array([0, 1, 2])
    kept = np.array([0, 1, 2, 3])
    with np.errstate(over="ignore"):
        found = nested_leakage_reports(p, order, kept)
        for k, report in zip(kept, found, strict=True):
            assert report == leakage_report(_release(p, order, int(k)))


@pytest.mark.parametrize(
    ("order", "kept", "words"),
    [
        ([0, 0, 1], [1], "permutation"),
        ([0, 1], [1], "permutation"),
        ([0, 1, 2], [4], r"\[0, 3\]"),
        ([0, 1, 2], [-1], r"\[0, 3\]"),
        ([0, 1, 2], [0.5], "integers"),
    ],
)
def test_the_arguments_are_checked(order: list[int], kept: list[float], words: str) -> None:
    p = np.full((2, 3), 1 / 6)
    with pytest.raises(ValidationError, match=words):
        nested_leakage_reports(p, order, kept)
