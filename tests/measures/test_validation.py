"""Every bad input is rejected with a message naming the argument and the value."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch import measures as m

GOOD = np.array([[0.4, 0.1], [0.1, 0.4]])
JOINT_FUNCS = [
    m.mutual_information,
    m.lift,
    m.log_lift,
    m.lift_epsilon,
    m.maximal_leakage,
    m.guessing_probability,
    m.bayes_error,
    m.bayes_leakage,
    m.leakage_report,
    lambda p: m.sibson_mi(p, 2.0),
    lambda p: m.arimoto_mi(p, 2.0),
    lambda p: m.f_information(p, "tv"),
    lambda p: m.subset_log_lift(p, [True, False]),
]


@pytest.mark.parametrize("func", JOINT_FUNCS)
@pytest.mark.parametrize(
    ("bad", "pattern"),
    [
        ([[0.6, -0.1], [0.1, 0.4]], r"`p` must have non-negative entries; got -0.1"),
        ([[np.nan, 0.1], [0.1, 0.4]], r"`p` must have finite entries; got nan"),
        ([[np.inf, 0.1], [0.1, 0.4]], r"`p` must have finite entries; got inf"),
        ([0.5, 0.5], r"`p` must be a 2-dimensional array; got shape \(2,\)"),
        ([[0.5, 0.1], [0.1, 0.4]], r"`p` must sum to 1 \(within atol=1e-08\); got a sum of 1.1"),
        ([["a", "b"]], r"`p` must be an array of numbers"),
        (np.zeros((0, 3)), r"`p` must not be empty"),
    ],
)
def test_bad_pmf(func, bad, pattern) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError, match=pattern):
        func(bad)


def test_tolerance_argument_is_honoured() -> None:
    p = GOOD * (1 + 1e-6)
    with pytest.raises(ValidationError, match="sum to 1"):
        m.mutual_information(p)
    assert m.mutual_information(p, atol=1e-5) > 0


@pytest.mark.parametrize("alpha", [0, -1, math.nan, "2", None, True])
def test_bad_alpha(alpha) -> None:  # type: ignore[no-untyped-def]
    for func in (m.sibson_mi, m.arimoto_mi):
        with pytest.raises(ValidationError, match=r"`alpha` must be a number in \(0, inf\]"):
            func(GOOD, alpha)


@pytest.mark.parametrize("base", [1, 0, -2, math.inf, "e"])
def test_bad_base(base) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError, match="`base` must be None or a positive finite number"):
        m.mutual_information(GOOD, base=base)
    with pytest.raises(ValidationError, match="`base`"):
        m.log_lift(GOOD, base=base)


def test_bad_channel() -> None:
    with pytest.raises(ValidationError, match=r"`k` must have rows summing to 1 .*row 1 summing"):
        m.ldp_epsilon([[0.5, 0.5], [0.5, 0.6]])
    with pytest.raises(ValidationError, match="`k` must have non-negative entries; got -0.5"):
        m.ldp_epsilon([[1.5, -0.5], [0.5, 0.5]])
    with pytest.raises(ValidationError, match=r"`k` must be a 2-dimensional array"):
        m.ldp_epsilon([0.5, 0.5])
    with pytest.raises(ValidationError, match=r"`k` must have 3 rows, one per input symbol"):
        m.nmil([0.2, 0.3, 0.5], np.eye(2))
    with pytest.raises(ValidationError, match="`p_x` must be a 1-dimensional array"):
        m.nmil(np.eye(2) / 2, np.eye(2))


def test_bad_mask() -> None:
    with pytest.raises(ValidationError, match=r"`mask` must be a boolean vector of length 2"):
        m.subset_log_lift(GOOD, [True])
    with pytest.raises(ValidationError, match="`mask` must be boolean"):
        m.subset_log_lift(GOOD, [2, 0])


def test_bad_f() -> None:
    with pytest.raises(ValidationError, match="`f` must be one of 'kl', 'chi2'"):
        m.f_information(GOOD, "renyi")
    with pytest.raises(ValidationError, match=r"`f` must satisfy f\(1\) = 0; got f\(1\) = 1.0"):
        m.f_information(GOOD, lambda t: t)
    with pytest.raises(ValidationError, match="`f` must be vectorised"):
        m.f_information(GOOD, lambda t: np.zeros(1))
    with pytest.raises(ValidationError, match="`f` must be one of the names or a callable"):
        m.f_information(GOOD, 3)  # type: ignore[arg-type]
