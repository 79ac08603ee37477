"""The Gowalla generators at the paper's 100 / 200 / 500 hits (``romanelli2020_gowalla_hits``).

Its fits are those of ``romanelli2020_obfuscation_gowalla`` (same settings, seed and code), so the
committed record is checked against that record without refitting: every value at 100 hits, the
planar Laplace and the exact optimum must be equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from privwatch import gallery

ROOT = Path(__file__).resolve().parents[1]
NAME = "romanelli2020_gowalla_hits"


def _results(name: str) -> dict[str, Any]:
    return dict(json.loads((ROOT / "experiments" / name / "results.json").read_text())["results"])


def test_the_settings_are_the_gowalla_records_but_the_generators_and_hits() -> None:
    ours, base = (
        gallery.config(NAME)["settings"],
        gallery.config("romanelli2020_obfuscation_gowalla")["settings"],
    )
    differ = {k for k in {*ours, *base} if ours.get(k) != base.get(k)}
    assert differ == {"hits", "kinds"}
    assert ours["hits"] == [100, 200, 500] and 100 in base["hits"]


@pytest.mark.parametrize("budget", ["L=1150", "L=518"])
def test_the_fits_are_the_gowalla_records(budget: str) -> None:
    ours, base = _results(NAME)[budget], _results("romanelli2020_obfuscation_gowalla")[budget]
    kinds = gallery.config(NAME)["settings"]["kinds"]
    for kind in kinds:
        a, b = ours[f"learned_{kind}"], base[f"learned_{kind}"]
        assert a["params"] == b["params"] and a["best_iteration"] == b["best_iteration"]
        assert a["test"]["100 hits"] == b["test"]["100 hits"]
        assert a["fresh_attacker"] == b["fresh_attacker"]
    assert ours["laplace"]["test"]["100 hits"] == base["laplace"]["test"]["100 hits"]
    assert ours["optimum_test"]["bayes_error"] == base["optimum_test"]["bayes_error"]


@pytest.mark.parametrize("budget", ["L=1150", "L=518"])
def test_more_hits_raise_the_error_of_a_continuous_release(budget: str) -> None:
    """The grid estimate (eq. 24-26) lets the attacker learn from the releases it is scored on;
    with 120 test points and 260^2 cells a continuous release (the paper's Laplace-seeded
    generator, planar Laplace) leaves most cells with a single hit, so the estimate is
    optimistic for the attacker and the error grows with the hits. The finite-support generator
    of ours puts its releases on few points and is estimated alike at every hit count."""
    entry = _results(NAME)[budget]

    def errors(node: dict[str, Any]) -> list[float]:
        return [node["test"][f"{h} hits"]["260x260"] for h in (100, 200, 500)]

    for continuous in (errors(entry["learned_laplace"]), errors(entry["laplace"])):
        assert continuous == sorted(continuous) and continuous[2] - continuous[0] > 0.1
    finite = errors(entry["learned_bayes"])
    assert max(finite) - min(finite) < 0.01
