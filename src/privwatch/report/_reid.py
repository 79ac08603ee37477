"""The report's re-identification section: the figures of the release and the input, which
estimator Dankar et al.'s rule chose and why, and how many records are above the threshold
(counted, never listed)."""

from __future__ import annotations

from typing import Any

from .._numbers import fmt

__all__ = ["reid_view"]

#: (key, name in the report, what it means), in the report's order.
_ROWS = (
    ("prosecutor_max", "prosecutor risk, highest", "1 / the size of a record's class"),
    ("prosecutor_mean", "prosecutor risk, mean", "the number of classes / records"),
    ("journalist_max", "journalist risk, highest", "1 / the size of a class in the population"),
    ("marketer", "marketer risk", "expected share of records re-identified by linking all"),
    ("global_risk", "global risk", "expected number of records re-identified"),
    ("records_above_threshold", "records above the threshold", "counted, never listed"),
    ("k_map", "k-map", "smallest population class among the released classes"),
    ("household_risk_max", "household risk, highest", "chance one member of a household is found"),
)
_SOURCES = {
    "population table": "the population table given",
    "weights": "the sum of the design weights of each class",
    "sampling fraction": "each class's size divided by the sampling fraction",
    "none": "the records themselves (the records are taken to be the whole population)",
}


def _uniques(block: dict[str, Any]) -> str:
    u = block["population_uniques"]
    text = f"{fmt(u['estimate'], 4)}"
    if u.get("ci"):
        text += f" (95 % {fmt(u['ci'][0], 4)} to {fmt(u['ci'][1], 4)})"
    return text


def reid_view(section: dict[str, Any] | None) -> dict[str, Any] | None:
    """Rows (figure, release, input, meaning) and sentences of ``leakage["reidentification"]``."""
    if section is None:
        return None
    rel, inp = section["release"], section["input"]
    rows = [
        {
            "name": name,
            "release": "-" if rel.get(key) is None else fmt(rel[key], 3),
            "input": "-" if inp.get(key) is None else fmt(inp[key], 3),
            "meaning": meaning,
        }
        for key, name, meaning in _ROWS
        if rel.get(key) is not None or inp.get(key) is not None
    ]
    rows.insert(
        5,
        {
            "name": "population uniques",
            "release": _uniques(rel),
            "input": _uniques(inp),
            "meaning": "classes of one person in the population",
        },
    )
    chosen = rel["population_uniques"]
    return {
        "rows": rows,
        "threshold": fmt(section["threshold"], 3),
        "reference": section.get("threshold_reference", ""),
        "source": _SOURCES.get(rel.get("population_source", "none"), ""),
        "estimator": chosen["estimator"],
        "why": chosen["rule"],
        "above": f"{int(rel['records_above_threshold']):,}",
        "n": f"{int(rel['n_records']):,}",
    }
