"""Issue #14 item 2: ``AuditResult.leakage`` has one documented set of keys on every route of the
audit (release search, (epsilon, delta) watchdog, learned estimator), None where a value does not
apply, and every route's leakage.json validates against the published schema."""

from __future__ import annotations

import warnings
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import numpy as np
import pandas as pd
import pytest

from privwatch.report import (
    LEAKAGE_KEYS,
    SCHEMA,
    UTILITY_KEYS,
    AuditResult,
    audit,
    leakage_payload,
)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 600
    s = rng.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.array(["p", "q"])[s],
            "a": np.where(rng.random(n) < 0.6, s, rng.integers(0, 3, n)).astype(str),
            "b": rng.integers(0, 4, n).astype(str),
        }
    )


def _run(table: pd.DataFrame, **kwargs: Any) -> AuditResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit(table, "s", ["a", "b"], epsilon=0.5, rng=0, **kwargs)


ROUTES: dict[str, dict[str, Any]] = {
    "search": {},
    "search-no-checks": {"checks": False},
    "delta": {"delta": 0.1},
    "learned": {"estimator": "quadratic_logistic"},
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_leakage_keys_are_the_same_on_every_route(table: pd.DataFrame, route: str) -> None:
    result = _run(table, **ROUTES[route])
    assert tuple(result.leakage) == LEAKAGE_KEYS
    assert tuple(result.leakage["utility"]) == UTILITY_KEYS
    assert result.leakage["status"] in ("met", "not_met")
    assert result.satisfied == (result.leakage["status"] == "met")
    jsonschema.validate(leakage_payload(result), SCHEMA)
    searched = route.startswith("search")
    assert (result.leakage["release"] is not None) == searched
    assert (result.leakage["frontier"] is not None) == searched
    assert result.leakage["held_out"] is None or searched
    assert (result.leakage["attack"] is not None) == (route == "search")
    assert (result.leakage["classic"] is not None) == (route in ("search", "delta"))
    assert (result.leakage["after"] is None) == (route == "learned")
    util = result.leakage["utility"]
    assert (util["information_nats"] is not None) == searched
    assert (util["utility_mi"] is not None) == (not searched)
    assert 0.0 <= util["flagged_probability"] <= 1.0


def test_schema_rejects_a_missing_key(table: pd.DataFrame) -> None:
    payload = leakage_payload(_run(table, delta=0.1))
    for key in LEAKAGE_KEYS:
        broken = dict(payload)
        del broken[key]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)
