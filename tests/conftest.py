"""Shared fixtures and Hypothesis strategies."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

settings.register_profile(
    "privwatch", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("privwatch")

RECORD_ENV = "PRIVWATCH_RECORD_TESTS"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the ``record`` tests (refits of committed gallery records) unless asked for.

    They take minutes each and re-check what `python -m privwatch.gallery NAME` re-runs in
    full; ``pytest -m record`` or ``PRIVWATCH_RECORD_TESTS=1`` runs them.
    """
    if os.environ.get(RECORD_ENV) == "1" or "record" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(
        reason=f"refits a committed gallery record: run with -m record or {RECORD_ENV}=1"
    )
    for item in items:
        if "record" in item.keywords:
            item.add_marker(skip)


@st.composite
def joints(draw: st.DrawFn, max_s: int = 4, max_x: int = 6, full_support: bool = True):
    """Random joint pmfs p[s, x] (full support by default, so every lift is finite)."""
    n_s = draw(st.integers(2, max_s))
    n_x = draw(st.integers(2, max_x))
    low = 1e-3 if full_support else 0.0
    # subnormal entries are allowed: the kernels must not overflow on them
    w = draw(arrays(np.float64, (n_s, n_x), elements=st.floats(low, 1.0)))
    if w.sum() <= 0:
        w[0, 0] = 1.0
    return w / w.sum()


@st.composite
def channels(draw: st.DrawFn, n_inputs: int, max_out: int = 5):
    """Random row-stochastic channels k[x, y] with n_inputs rows."""
    n_y = draw(st.integers(1, max_out))
    w = draw(arrays(np.float64, (n_inputs, n_y), elements=st.floats(0.0, 1.0)))
    w[w.sum(axis=1) == 0, 0] = 1.0
    return w / w.sum(axis=1, keepdims=True)
