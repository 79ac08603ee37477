"""One monotone frontier (issue #42 item 4): each frontier point is the release the audit
publishes at its epsilon, with its held-out verdict; a release found at a smaller epsilon is a
candidate at every larger one, so information kept by a met release never falls as epsilon
grows; the frontier, the alternatives and a rerun at a point's epsilon agree."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.preprocessing import bin_columns
from privwatch.release import ReleaseNotMetWarning, ReleaseResult, find_release

from ._reference_venvs import census_like

GRID = [0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 2.0]
RANK = {"met": 3, None: 2, "inconclusive": 1, "breach": 0}
CENSUS_OBSERVED = ["age", "sex", "race", "education", "marital"]


@pytest.fixture(scope="module")
def compas() -> pd.DataFrame:
    return bin_columns(load_compas(), dict(COMPAS_BINS))


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    df = census_like(3000, np.random.default_rng(0))
    df["age"] = pd.cut(df["age"], [0, 25, 35, 45, 55, 65, 200]).astype(str)
    return df


def _find(df: pd.DataFrame, sensitive: str, observed: list[str], **kw: Any) -> ReleaseResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        return find_release(df, sensitive, observed, **kw)


def _assert_monotone(frontier: list[dict[str, Any]], disclosure: str = "both") -> None:
    """Along epsilon the held-out verdict never worsens and information kept by a release whose
    verdict is met never falls; two-sided, met never turns into not met (one-sided, a large
    epsilon protects no value at all, which no release can change)."""
    points = sorted(frontier, key=lambda p: p["epsilon"])
    assert [p["epsilon"] for p in points] == sorted(GRID)
    for a, b in itertools.pairwise(points):
        assert RANK[b["held_out_verdict"]] >= RANK[a["held_out_verdict"]]
        if a["held_out_verdict"] == "met":  # what meets a also meets b: b keeps at least as much
            assert b["information_nats"] >= a["information_nats"] - 1e-12
        if disclosure == "both":
            assert b["met"] >= a["met"]
        assert b["searched_epsilon"] <= b["epsilon"]
    assert sum(p["met"] for p in points) >= 3, "too few met points: the checks test little"


@pytest.mark.parametrize("disclosure", ["both", "positive"])
def test_compas_frontier_is_monotone(compas: pd.DataFrame, disclosure: str) -> None:
    r = _find(
        compas, "race", COMPAS_OBSERVED, epsilon=0.3, disclosure=disclosure,
        frontier_epsilons=GRID, suggest=False,
    )  # fmt: skip
    _assert_monotone(r.frontier, disclosure)


def test_census_like_frontier_is_monotone(census: pd.DataFrame) -> None:
    r = _find(census, "income", CENSUS_OBSERVED, epsilon=0.3, frontier_epsilons=GRID, suggest=False)
    _assert_monotone(r.frontier)


@pytest.mark.slow  # four audits of COMPAS: about 10 s of CPU
def test_frontier_alternatives_and_reruns_agree(compas: pd.DataFrame) -> None:
    """At epsilon 0.1 the COMPAS release is not met: its frontier points and its epsilon
    alternatives are the releases that audits at those epsilons publish, held-out verdict
    included."""
    r = _find(compas, "race", COMPAS_OBSERVED, epsilon=0.1)
    assert not r.satisfied and r.alternatives
    points = {p["epsilon"]: p for p in r.frontier}
    assert points[0.1]["information_nats"] == r.information_nats
    assert points[0.1]["met"] == r.satisfied
    compared = 0
    for alt in r.alternatives:
        point = points.get(alt["epsilon"])
        if alt["changed"] != "epsilon" or point is None:
            continue
        assert alt["information_nats"] == point["information_nats"]
        assert alt["searched_epsilon"] == point["searched_epsilon"]
        assert alt["held_out"]["interval"] == [point["held_out_low"], point["held_out_high"]]
        compared += 1
    assert compared >= 1
    for eps in (0.25, 0.5):
        point = points[eps]
        assert point["searched_epsilon"] in (0.25, 0.5)  # on the ladder: a rerun searches it
        rerun = _find(compas, "race", COMPAS_OBSERVED, epsilon=eps, suggest=False)
        assert rerun.information_nats == point["information_nats"]
        assert rerun.satisfied == point["met"]
        assert rerun.held_out_verdict == point["held_out_verdict"]
        assert rerun.held_out is not None
        assert rerun.held_out.breach_probability == point["held_out_estimate"]
        assert {q["epsilon"]: q for q in rerun.frontier}[eps] == point
