"""Classic disclosure measures: values computed by hand, identities, bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from privwatch import measures as m
from privwatch.exceptions import ValidationError

# Three classes of sizes 4, 4, 2 over three sensitive values; N = 10, p = (0.6, 0.2, 0.2).
T = np.array([[3, 1, 0], [1, 1, 2], [2, 0, 0]])
# Two classes of size 4; p = (0.5, 0.25, 0.25).
U = np.array([[3, 1, 0], [1, 1, 2]])


def test_class_size_measures_by_hand() -> None:
    assert m.k_anonymity(T) == 2
    assert m.sample_uniques(T) == 0
    assert m.sample_uniques([[1, 0], [0, 1], [2, 3]]) == 2
    risk = m.prosecutor_risk(T)
    assert risk.max == pytest.approx(0.5)
    assert risk.mean == pytest.approx(3 / 10)  # 3 classes over 10 records


def test_l_diversity_by_hand() -> None:
    assert m.distinct_l_diversity(T) == 1  # the third class holds one value
    assert m.distinct_l_diversity(U) == 2
    assert m.entropy_l_diversity(T) == pytest.approx(1.0)
    # class 0: H(3/4, 1/4); class 1: H(1/4, 1/4, 1/2) = 1.5 ln 2
    h0 = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert m.entropy_l_diversity(U) == pytest.approx(math.exp(h0))
    # descending counts: class 0 (3, 1, 0): 3 / (1 + 0); class 1 (2, 1, 1): 2 / 2
    assert m.recursive_cl_diversity(U, 2) == pytest.approx(3.0)
    assert m.recursive_cl_diversity(U, 3) == math.inf  # class 0 has only two values
    assert m.recursive_cl_diversity(T, 2) == math.inf


def test_t_closeness_by_hand() -> None:
    # TV distances: 0.2, 0.35, 0.4
    assert m.t_closeness(T) == pytest.approx(0.4)
    # ordered, m = 3: class 1 r = (-.35, .05, .3): cumsums -.35, -.3, 0 -> 0.65 / 2
    assert m.t_closeness(T, values=[1.0, 2.0, 3.0]) == pytest.approx(0.325)
    # the order is read from `values`: columns in the order 0, 2, 1
    assert m.t_closeness(T, values=[0, 2, 1]) == pytest.approx(0.3)
    assert m.t_closeness([[5], [2]], values=[7]) == 0.0


def test_beta_likeness_by_hand() -> None:
    # gains: 0.25, 0.25 | 0.25, 1.5 | 2/3; the largest is value 2 in class 1 (0.5 vs 0.2)
    assert m.basic_beta_likeness(T) == pytest.approx(1.5)
    # class 2 raises value 0 from 0.6 to 1: gain 2/3 > -ln 0.6 = 0.51, no beta is met
    assert m.enhanced_beta_likeness(T) == math.inf
    # U: gains 0.5 of p = 0.5 (cap ln 2) and 1 of p = 0.25 (cap ln 4): within caps
    assert m.basic_beta_likeness(U) == pytest.approx(1.0)
    assert m.enhanced_beta_likeness(U) == pytest.approx(1.0)
    # a table whose classes all match p gains nothing
    assert m.basic_beta_likeness([[1, 2], [2, 4]]) == pytest.approx(0.0)


def test_delta_disclosure_by_hand() -> None:
    assert m.delta_disclosure([[2, 1], [1, 2]]) == pytest.approx(math.log(1.5))
    assert m.delta_disclosure(T) == math.inf  # class 0 rules out value 2: log 0
    assert m.delta_disclosure([[1, 2], [2, 4]]) == pytest.approx(0.0, abs=1e-12)


def test_zero_columns_are_not_values() -> None:
    padded = np.hstack([U, np.zeros((2, 1))])
    for f in (m.entropy_l_diversity, m.t_closeness, m.basic_beta_likeness, m.delta_disclosure):
        assert f(padded) == pytest.approx(f(U))
    assert m.t_closeness(padded, values=[1, 2, 3, 4]) == pytest.approx(
        m.t_closeness(U, values=[1, 2, 3])
    )


counts_strategy = arrays(
    np.int64, st.tuples(st.integers(1, 6), st.integers(1, 5)), elements=st.integers(0, 9)
).filter(lambda a: bool((a.sum(axis=1) > 0).all()))


@settings(max_examples=80, deadline=None)
@given(counts_strategy)
def test_identities(counts: np.ndarray) -> None:
    n = counts.sum()
    sizes = counts.sum(axis=1)
    assert m.k_anonymity(counts) == sizes.min()
    assert m.prosecutor_risk(counts).max == pytest.approx(1 / sizes.min())
    assert m.sample_uniques(counts) == int((sizes == 1).sum())
    # delta-disclosure is the two-sided lift epsilon of the class-sensitive joint pmf
    eps = m.lift_epsilon(counts.T / n)
    assert m.delta_disclosure(counts) == pytest.approx(eps) or (
        math.isinf(eps) and math.isinf(m.delta_disclosure(counts))
    )
    # entropy l-diversity never exceeds distinct l-diversity
    assert m.entropy_l_diversity(counts) <= m.distinct_l_diversity(counts) + 1e-9
    # ordered ground distances are at most 1: the ordered EMD is at most the equal-distance one
    values = np.arange(counts.shape[1])
    assert m.t_closeness(counts, values=values) <= m.t_closeness(counts) + 1e-12
    # q <= p e^delta bounds the gain; enhanced beta is basic beta or inf
    beta = m.basic_beta_likeness(counts)
    assert beta <= math.expm1(m.delta_disclosure(counts)) + 1e-9
    assert m.enhanced_beta_likeness(counts) in (pytest.approx(beta), math.inf)


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([1, 2, 3], "`counts` must be a non-empty 2-dimensional array"),
        (np.zeros((0, 2)), "`counts` must be a non-empty 2-dimensional array"),
        ([[1, -1]], "`counts` must hold non-negative whole numbers of records; got -1.0"),
        ([[1, 0.5]], "`counts` must hold non-negative whole numbers of records; got 0.5"),
        ([[1, np.nan]], "`counts` must hold non-negative whole numbers of records; got nan"),
        (
            [[1, 1], [0, 0]],
            "`counts` must have at least one record in every class (row); got an empty row 1",
        ),
        ([["a", "b"]], "`counts` must be an array of counts; got"),
    ],
)
def test_bad_counts(counts: object, message: str) -> None:
    with pytest.raises(ValidationError) as err:
        m.k_anonymity(counts)  # type: ignore[arg-type]
    assert message in str(err.value)


def test_bad_arguments() -> None:
    with pytest.raises(ValidationError, match=r"`l` must be an int of at least 2; got 1\."):
        m.recursive_cl_diversity(U, 1)
    with pytest.raises(ValidationError, match=r"`l` must be an int of at least 2; got 2\.5"):
        m.recursive_cl_diversity(U, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"one entry per column of `counts` \(3\); got"):
        m.t_closeness(U, values=[1, 2])
    with pytest.raises(ValidationError, match=r"`values` must be distinct; got \[1, 1, 2\]"):
        m.t_closeness(U, values=[1, 1, 2])
