"""Cross-checks against the reference libraries dit and qif (test-only dependencies)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privwatch import measures as m
from tests.conftest import joints

dit = pytest.importorskip("dit")
qif = pytest.importorskip("qif")
from dit.other.sibson_mutual_information import sibson_mutual_information  # noqa: E402


def _dit(p: np.ndarray):  # type: ignore[no-untyped-def]
    outcomes = [(s, x) for s in range(p.shape[0]) for x in range(p.shape[1]) if p[s, x] > 0]
    return dit.Distribution(outcomes, [p[o] for o in outcomes])


@given(joints(full_support=False))
def test_shannon_mi_matches_dit(p: np.ndarray) -> None:
    expected = dit.shannon.mutual_information(_dit(p), [0], [1])
    assert m.mutual_information(p, base=2) == pytest.approx(expected, abs=1e-9)


@given(joints(full_support=False), st.sampled_from([0.5, 2.0, 3.5, 10.0]))
def test_sibson_mi_matches_dit(p: np.ndarray, alpha: float) -> None:
    expected = sibson_mutual_information(_dit(p), [0], [1], alpha)
    assert m.sibson_mi(p, alpha, base=2) == pytest.approx(expected, abs=1e-9)


@given(joints(full_support=False))
def test_bayes_vulnerability_and_risk_match_qif(p: np.ndarray) -> None:
    p_s = p.sum(axis=1)
    keep = p_s > 0
    prior, channel = p_s[keep], p[keep] / p_s[keep, None]
    assert m.guessing_probability(p) == pytest.approx(
        qif.measure.bayes_vuln.posterior(prior, channel), abs=1e-12
    )
    assert m.bayes_error(p) == pytest.approx(
        qif.measure.bayes_risk.posterior(prior, channel), abs=1e-12
    )
    assert m.mutual_information(p, base=2) == pytest.approx(
        qif.measure.shannon.add_leakage(prior, channel), abs=1e-9
    )


@given(joints())
def test_mult_capacity_is_exp_maximal_leakage(p: np.ndarray) -> None:
    channel = p / p.sum(axis=1, keepdims=True)  # P_{X|S}, full-support prior
    cap = qif.measure.bayes_vuln.mult_capacity(channel)
    assert math.exp(m.maximal_leakage(p)) == pytest.approx(cap, rel=1e-12)


@given(joints(max_x=5))
def test_ldp_epsilon_is_discrete_metric_d_privacy(p: np.ndarray) -> None:
    channel = p / p.sum(axis=1, keepdims=True)
    expected = qif.measure.d_privacy.smallest_epsilon(channel, lambda a, b: 0.0 if a == b else 1.0)
    assert m.ldp_epsilon(channel) == pytest.approx(expected, rel=1e-9)
