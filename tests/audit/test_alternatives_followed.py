"""Advice that holds when followed: an audit that is NOT MET offers feasible alternatives, and
running the audit with a feasible alternative's exact ``args`` gives MET (issue 32)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import privwatch as pw


def _table(n: int = 600, seed: int = 3) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    df = pd.DataFrame({"a": g.integers(0, 6, n), "b": g.choice(list("pqrs"), n),
                       "c": g.integers(0, 3, n)})  # fmt: skip
    logit = 0.6 * df["a"] - 1.5 + (df["b"] == "p") * 1.2
    df["s"] = np.where(g.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return df


def _run(df: pd.DataFrame, **options: Any) -> pw.audit.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pw.audit.run(source=df, sensitive="s", checks=False, **options)


@pytest.mark.parametrize("epsilon", [0.1, 0.15])
def test_a_feasible_alternative_followed_gives_met(epsilon: float) -> None:
    df = _table()
    first = _run(df, epsilon=epsilon)  # two-sided at this epsilon keeps nothing: NOT MET
    assert not first.satisfied and first.reasons
    feasible = [a for a in first.alternatives if a["feasible"]]
    assert feasible, [a["description"] for a in first.alternatives]
    # ranked strongest privacy first
    keys = [(a["epsilon"], a["disclosure"] == "positive") for a in first.alternatives]
    assert keys == sorted(keys, key=lambda k: (k[0], k[1])) or len(keys) < 2
    for alt in feasible:
        # an alternative's args are what it changes in the audit's own options ("audit again
        # with ..."): another method's keep the epsilon, a search's name their own
        args = {"epsilon": epsilon, **alt["args"]}
        followed = _run(df, **args)
        assert followed.satisfied, (alt["description"], followed.reasons)
        if alt["changed"] == "method":  # another release method: no search made it
            assert followed.release_method.name == alt["args"]["method"]
            kept = followed.leakage["utility"]["information_nats"]
        else:
            assert followed.found is not None
            kept = followed.found.information_nats
        assert kept == pytest.approx(alt["information_nats"])


def test_one_sided_protecting_nobody_is_never_met() -> None:
    df = _table(1000, seed=4)
    # p(yes), p(no) are near 1/2: at epsilon 0.9 one-sided, p e^eps >= 1 for both values
    result = _run(df, epsilon=0.9, disclosure="positive", folds=0)
    per_value = result.leakage["guarantee"]["per_value"]
    assert not any(v["protected"] for v in per_value)
    assert not result.satisfied
    assert any("protects no sensitive value" in r for r in result.reasons)
    assert "protects no value" in result.leakage["guarantee_in_words"]
