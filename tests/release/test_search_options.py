"""Every search behind a release (the held-out folds, the frontier, the alternatives) is run
with the user's search options: an alternative or a frontier point is the release that
:func:`find_release` gives at its settings, number for number."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privwatch.release import (
    Hierarchy,
    ReleaseNotMetWarning,
    ReleaseResult,
    auto_hierarchy,
    find_release,
)


def _table(seed: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    rng = np.random.default_rng(seed)
    n = 600
    df = pd.DataFrame(
        {"a": rng.integers(0, 6, n), "b": rng.choice(list("pqrs"), n), "c": rng.integers(0, 3, n)}
    )
    logit = 0.6 * df["a"] - 1.5 + (df["b"] == "p") * 1.2
    df["s"] = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return df, {c: auto_hierarchy(df[c], c) for c in "abc"}


def _release(df: pd.DataFrame, **kw: Any) -> ReleaseResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        return find_release(df, "s", list("abc"), **kw)


#: Options a user may set that change what a search finds on these tables (confidence: a credible
#: margin; max_nodes: the global search stops early).
USER_OPTIONS = [{"confidence": 0.9}, {"confidence": 0.9, "max_nodes": 4}, {"max_nodes": 5}]


def _follow(df: pd.DataFrame, alternative: dict[str, Any], **kw: Any) -> ReleaseResult:
    """The release an alternative's exact ``args`` give (the audit run as advised)."""
    return _release(df, **alternative["args"], **kw)


@pytest.mark.parametrize("options", USER_OPTIONS)
def test_held_out_alternatives_are_the_releases_at_their_settings(options: dict[str, Any]) -> None:
    df, hier = _table(3)
    # aim=False: the search does not grow a margin itself, so the user's options are all there is
    kw: dict[str, Any] = {
        "hierarchies": hier, "folds": 4, "rng": 1, "frontier_epsilons": [], "aim": False,
    }  # fmt: skip
    r = _release(df, epsilon=0.15, **kw, **options)
    plain = _release(df, epsilon=0.15, **kw)
    assert not r.satisfied  # not met: advice given
    assert r.alternatives
    # the options change the advice on this table (so the comparison below can fail)
    assert r.alternatives != plain.alternatives
    for alt in r.alternatives:
        for name, value in options.items():  # the user's options are kept (a margin may grow)
            assert alt["args"][name] == value
        followed = _follow(df, alt, **kw)
        assert followed.information_nats == alt["information_nats"]
        if alt["held_out"] is None:  # a release that keeps nothing is not checked
            assert followed.held_out is None and followed.information_nats == 0.0
            continue
        assert followed.held_out is not None
        assert followed.held_out.breach_probability == alt["held_out"]["estimate"]
        assert list(followed.held_out.breach_probability_ci) == alt["held_out"]["interval"]
        assert followed.satisfied == alt["feasible"] or alt["unprotected"]


@pytest.mark.parametrize("options", USER_OPTIONS)
def test_frontier_points_are_the_releases_at_their_epsilons(options: dict[str, Any]) -> None:
    df, hier = _table(5)
    grid = [0.3, 0.6, 1.2]
    kw: dict[str, Any] = {"hierarchies": hier, "folds": 0, "suggest": False}
    r = _release(df, epsilon=0.6, frontier_epsilons=grid, **kw, **options)
    plain = _release(df, epsilon=0.6, frontier_epsilons=grid, **kw)
    assert [p["epsilon"] for p in r.frontier] == grid
    assert r.frontier != plain.frontier
    for point in r.frontier:
        # the same frontier: its epsilons' releases are candidates at every larger epsilon
        at = _release(df, epsilon=point["epsilon"], frontier_epsilons=grid, **kw, **options)
        assert point["information_nats"] == at.information_nats
        assert point["information_global_nats"] == at.information_global_nats
        assert point["information_local_nats"] == at.information_local_nats
        assert point["suppressed_share"] == at.suppressed_records / len(df)
        assert point["method"] == at.method


def _clash() -> tuple[pd.DataFrame, Hierarchy]:
    """Four classes at the prior's shares and two small ones far from it (together at the prior):
    at epsilon 0.1 no release keeps information within 5 % suppressed, while suppressing the two
    small classes (11 % of the records) does, by a margin that a credible bound can break."""
    counts = {x: (400, 240, 160) for x in "abcd"} | {"e": (190, 0, 10), "f": (10, 120, 70)}
    rows = [
        (x, s) for x, n in counts.items() for s, k in zip("pqr", n, strict=True) for _ in range(k)
    ]
    groups = ("g1", "g1", "g2", "g2", "g1", "g2")
    hierarchy = Hierarchy("x", tuple("abcdef"), (tuple("abcdef"), groups, ("*",) * 6))
    return pd.DataFrame(rows, columns=["x", "s"]), hierarchy


def test_alternatives_to_an_empty_release_are_the_releases_at_their_settings() -> None:
    df, hierarchy = _clash()
    kw: dict[str, Any] = {
        "epsilon": 0.1,
        "max_suppressed": 0.05,
        "folds": 0,
        "hierarchies": {"x": hierarchy},
        "frontier_epsilons": [0.5],
    }

    def release(**more: Any) -> ReleaseResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseNotMetWarning)
            return find_release(df, "s", ["x"], **{**kw, **more})

    r = release(confidence=0.9)
    assert r.information_nats == 0.0 and not r.satisfied
    assert r.alternatives != release().alternatives
    assert {a["changed"] for a in r.alternatives} >= {"epsilon", "max_suppressed", "disclosure"}
    assert any(a["feasible"] for a in r.alternatives)
    for alt in r.alternatives:
        assert alt["args"]["confidence"] == 0.9
        args = {k: v for k, v in alt["args"].items() if k not in kw}
        followed = release(**args, epsilon=alt["args"]["epsilon"],
                           max_suppressed=alt["args"]["max_suppressed"])  # fmt: skip
        assert followed.information_nats == alt["information_nats"]
        assert followed.satisfied == alt["feasible"] or alt["unprotected"]
