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


def _held_out_text(r: ReleaseResult) -> str:
    """How an alternative quotes a release: information kept and held-out breach."""
    h = r.held_out
    assert h is not None
    lo, hi = h.breach_probability_ci
    return (
        f"keeps {r.information_nats:.2f} nats; held-out breach {h.breach_probability:.1%} "
        f"(95 % {lo:.1%}-{hi:.1%})"
    )


#: Options a user may set that change what a search finds on these tables (confidence: a credible
#: margin; max_nodes: the global search stops early).
USER_OPTIONS = [{"confidence": 0.9}, {"confidence": 0.9, "max_nodes": 4}, {"max_nodes": 5}]


@pytest.mark.parametrize("options", USER_OPTIONS)
def test_held_out_alternatives_are_the_releases_at_their_settings(options: dict[str, Any]) -> None:
    df, hier = _table(3)
    kw: dict[str, Any] = {"hierarchies": hier, "folds": 4, "rng": 1, "frontier_epsilons": []}
    r = _release(df, epsilon=0.4, **kw, **options)
    plain = _release(df, epsilon=0.4, **kw)
    assert not r.satisfied and r.held_out is not None  # the held-out check fails: advice given
    assert len(r.alternatives) == 4
    # the options change the advice on this table (so the comparison below can fail)
    assert r.alternatives != plain.alternatives
    settings = [(0.4, "positive"), *((0.4 * f, "both") for f in (1.5, 2.0, 3.0))]
    for text, (eps, disclosure) in zip(r.alternatives, settings, strict=True):
        followed = _release(df, epsilon=eps, disclosure=disclosure, **kw, **options)
        assert _held_out_text(followed) in text
        assert text.startswith(f"epsilon {eps:g} with `disclosure`='{disclosure}'")


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
        at = _release(df, epsilon=point["epsilon"], frontier_epsilons=[], **kw, **options)
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
    raised, share, positive = r.alternatives
    assert raised.startswith("raise epsilon to 0.5: keeps ")
    at_raised = release(epsilon=0.5, confidence=0.9)
    assert f"keeps {at_raised.information_nats:.2f} nats" in raised
    assert share.startswith("allow `max_suppressed`=")
    at_share = release(max_suppressed=float(share.split("=")[1].split(":")[0]), confidence=0.9)
    assert f"keeps {at_share.information_nats:.2f} nats" in share
    assert positive.startswith("use `disclosure`='positive' ")
    one_sided = release(disclosure="positive", confidence=0.9)
    assert f"keeps {one_sided.information_nats:.2f} nats" in positive
