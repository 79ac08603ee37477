"""Re-identification risk: sdcMicro's and the papers' worked examples, and small cases by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privwatch.exceptions import ValidationError
from privwatch.measures import (
    delta_presence,
    global_risk,
    household_risk,
    individual_risk,
    journalist_risk,
    k_map,
    marketer_risk,
    pitman_uniques,
    population_uniques,
    prosecutor_risk_per_class,
    snb_uniques,
    suda,
    zayatz_uniques,
)
from privwatch.measures._uniques import _pitman_fit, _pitman_sums, snb_expected

# sdcMicro tests/testthat/test_indivRisk.R: keys A, B, C and weights of 8 records.
A = [2, 3, 2, 2, 3, 3, 1, 2]
B = [3, 3, 3, 3, 3, 3, 4, 3]
C = [1, 3, 1, 2, 1, 1, 1, 1]
W = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51]


def _classes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = np.column_stack([A, B, C])
    _, inv, f = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    big_f = np.bincount(inv, weights=W)
    return f, big_f, inv


def test_individual_risk_matches_sdcmicro_approx_and_exact() -> None:
    f, big_f, inv = _classes()
    approx = individual_risk(f, big_f)[inv]
    exact = individual_risk(f, big_f, method="exact")[inv]
    np.testing.assert_allclose(
        approx,
        [
            0.01369863,
            0.08579129,
            0.01369863,
            0.17707583,
            0.01877883,
            0.01877883,
            0.03931625,
            0.01369863,
        ],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        exact,
        [
            0.01355297,
            0.08579129,
            0.01355297,
            0.17707583,
            0.01877883,
            0.01877883,
            0.03931625,
            0.01355297,
        ],
        rtol=1e-6,
    )


def test_individual_risk_without_sampling_is_prosecutor() -> None:
    f, _, inv = _classes()
    np.testing.assert_allclose(individual_risk(f, f)[inv], 1.0 / f[inv])
    np.testing.assert_allclose(
        prosecutor_risk_per_class(f)[inv], [1 / 3, 1, 1 / 3, 1, 0.5, 0.5, 1, 1 / 3]
    )


def test_exact_individual_risk_is_the_negative_binomial_expectation() -> None:
    # E[1/F] with F - f ~ NegBin(f, p), summed term by term
    for f, p in [(3, 0.2), (5, 0.05), (2, 0.3), (1, 0.01)]:
        h = np.arange(0, 20000)
        log_pmf = (
            np.array([math.lgamma(f + x) - math.lgamma(f) - math.lgamma(x + 1) for x in h])
            + f * math.log(p)
            + h * math.log(1 - p)
        )
        direct = float((np.exp(log_pmf) / (f + h)).sum())
        assert individual_risk([f], [f / p], method="exact")[0] == pytest.approx(direct, rel=1e-7)


def test_global_risk_and_household_risk_by_hand() -> None:
    f, big_f, inv = _classes()
    r = individual_risk(f, big_f)
    assert global_risk(f, r) == pytest.approx(float(r[inv].sum()))
    h = household_risk([0.5, 0.2, 0.1, 0.0], ["a", "a", "b", "c"])
    np.testing.assert_allclose(h, [1 - 0.5 * 0.8, 1 - 0.5 * 0.8, 0.1, 0.0])
    assert household_risk([1.0, 0.3], [1, 1]).tolist() == [1.0, 1.0]


def test_journalist_marketer_kmap_delta_presence_by_hand() -> None:
    # classes of the sample: sizes 1, 2, 3 in population classes of 2, 8, 3
    j = journalist_risk([1, 2, 3], [2, 8, 3])
    assert j.max == pytest.approx(0.5)
    assert j.mean == pytest.approx((1 / 2 + 2 / 8 + 3 / 3) / 6)
    assert marketer_risk([1, 2, 3], [2, 8, 3]) == pytest.approx((0.5 + 0.25 + 1) / 6)
    assert marketer_risk([1, 2, 3]) == pytest.approx(3 / 6)
    assert k_map([1, 2, 3], [2, 8, 3]) == 2
    assert delta_presence([1, 2, 3, 0], [2, 8, 3, 5]) == (0.0, 1.0)
    with pytest.raises(ValidationError):
        journalist_risk([3], [2])


def test_suda_sdcmicro_book_and_guideline_examples() -> None:
    tab = np.array(
        [
            ["20s", "male", "50k+", "hs"],
            ["20s", "male", "50k+", "hs"],
            ["20s", "male", "50k-", "hs"],
            ["20s", "male", "50k-", "hs"],
            ["20s", "female", "50k-", "uni"],
            ["20s", "female", "50k-", "hs"],
            ["20s", "female", "50k-", "ms"],
            ["60s", "male", "50k-", "uni"],
        ]
    )
    assert suda(tab).score[4:].tolist() == [4, 2, 6, 8]
    res = ["U", "U", "U", "U", "R", "U", "U", "U", "U", "U"]
    sex = ["F", "F", "F", "M", "F", "M", "F", "M", "F", "F"]
    edu = ["si", "si", "pi", "sc", "sc", "sc", "pc", "ps", "si", "si"]
    lab = ["E", "E", "N", "E", "U", "E", "N", "U", "N", "N"]
    out = suda(np.column_stack([res, sex, edu, lab]))
    assert out.score.tolist() == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]
    assert out.n_special == 4
    # up to size 1 only: the records with a unique single value
    assert suda(np.column_stack([res, sex, edu, lab]), max_size=1).special.sum() == 4


def test_zayatz_by_hand() -> None:
    # sample class sizes 1, 1, 2 (n = 4) from N = 10
    n_big, n = 10, 4
    h = {j: j * math.comb(n_big - j, n - 1) / math.comb(n_big, n) for j in (1, 2)}
    share = (2 / 3) * h[1] / ((2 / 3) * h[1] + (1 / 3) * h[2])
    assert zayatz_uniques([1, 1, 2], n_big) == pytest.approx(2 * share / (n / n_big))
    assert zayatz_uniques([2, 3], 100) == 0.0


def test_pitman_is_the_maximum_likelihood_fit() -> None:
    rng = np.random.default_rng(4)
    sizes = np.unique(rng.zipf(1.5, 20000), return_counts=True)[1]
    j, c = np.unique(sizes, return_counts=True)
    n = float((j * c).sum())
    fit = _pitman_fit(j, c.astype(float), n)
    assert fit is not None
    _, grad, _ = _pitman_sums(*fit, float(c.sum()), n, j, c.astype(float))
    assert np.abs(grad).max() < 1e-6
    theta, alpha = fit
    expected = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha)) * 1e5**alpha
    assert pitman_uniques(sizes, 1e5) == pytest.approx(expected)


def test_snb_expected_counts_by_direct_sum() -> None:
    k, pi, alpha, beta = 500.0, 0.2, 0.7, 0.3
    y = np.arange(0, 3000)
    log_nb = (
        np.array([math.lgamma(alpha + v) - math.lgamma(alpha) - math.lgamma(v + 1) for v in y])
        + alpha * math.log(beta)
        + y * math.log(1 - beta)
    )
    big_f = 1 + y
    e1 = k * (np.exp(log_nb) * big_f * pi * (1 - pi) ** (big_f - 1)).sum()
    e2 = k * (np.exp(log_nb) * big_f * (big_f - 1) / 2 * pi**2 * (1 - pi) ** (big_f - 2)).sum()
    assert snb_expected(k, pi, alpha, beta) == pytest.approx((e1, e2), rel=1e-9)


def test_snb_and_rule_on_a_whole_population() -> None:
    # the sample is the whole population: every estimator that applies gives the sample uniques
    sizes = [1, 1, 1, 2, 2, 5]
    assert zayatz_uniques(sizes, 12) == pytest.approx(3.0)
    assert snb_uniques(sizes, 12) == 3.0


def test_dankar_rule_choices() -> None:
    rng = np.random.default_rng(0)
    pop = rng.zipf(1.4, 200_000)
    for frac, allowed in [(0.01, {"pitman", "zayatz"}), (0.3, {"zayatz", "snb"})]:
        sample = rng.choice(pop, int(frac * pop.size), replace=False)
        sizes = np.unique(sample, return_counts=True)[1]
        r = population_uniques(sizes, pop.size)
        assert r.estimator in allowed
        if frac > 0.1 and r.snb is not None:
            assert r.estimate == pytest.approx(min(r.snb, r.zayatz))
        if frac <= 0.1 and r.pitman is not None:
            assert r.estimate == r.pitman
    none = population_uniques([2, 3], 100)
    assert (none.estimate, none.estimator) == (0.0, "none")
