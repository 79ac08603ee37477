"""What randomization buys (#41 part B): the generalisation search against the randomized
release of the flagged set (the LP channel, in place of merging into '*'), on COMPAS and a
census-like table, at epsilon 0.5 / 1 / 2, two- and one-sided.

Both run through ``privwatch.audit.run`` on the same records and columns (the randomized
method picked through the registry, as ``--method randomized`` will), 5 folds, seed 0, no
classic checks. Reported per row: information kept (search: H(released cells); randomized:
I(X; Y), and that of merging the same flagged set into '*'), records altered (search: records
suppressed to '*'; randomized: records released as another symbol than their own tuple), the
held-out breach estimate with its 95 % interval, and the verdict.

    python benchmarks/bench_randomized.py  # writes benchmarks/results/randomized.json
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import privwatch as pw
from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "release"))
from _reference_venvs import census_like

EPSILONS = (0.5, 1.0, 2.0)
DISCLOSURES = ("both", "positive")


def _tables():  # type: ignore[no-untyped-def]
    census = census_like(5000, np.random.default_rng(0))
    return {
        "compas": (load_compas(), "race", list(COMPAS_OBSERVED), dict(COMPAS_BINS)),
        "census_like_5000": (
            census, "income", ["age", "sex", "race", "education", "marital"],
            {"age": [25, 35, 45, 55, 65]},
        ),
    }  # fmt: skip


def _run(method: str, frame, sens, obs, bins, eps, disclosure):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = pw.audit.run(
            source=frame, sensitive=sens, observed=obs, bins=bins, epsilon=eps,
            disclosure=disclosure, folds=5, seed=0, checks=False, method=method,
        )  # fmt: skip
    seconds = time.perf_counter() - t
    held = r.leakage["held_out"] or {}
    rel = r.leakage["release"] or {}
    out = {
        "method": method, "status": r.leakage["status"], "seconds": round(seconds, 2),
        "breach": held.get("breach_probability"), "breach_ci": held.get("breach_probability_ci"),
        "verdict": held.get("verdict"),
    }  # fmt: skip
    if method == "search":
        out["nats"] = rel.get("entropy_nats", r.leakage["utility"]["information_nats"])
        out["altered"] = rel.get("suppressed_records")
    else:
        out["nats"] = rel["information_nats"]
        out["merge_nats"] = rel["merge_information_nats"]
        out["altered"] = rel["altered_records"]
        out["flagged_records"] = rel["flagged_records"]
        out["margin"] = rel["margin"]
    out["n"] = int(r.summary["n_records"])
    out["input_nats"] = r.leakage["utility"]["information_input_nats"]
    return out


def main() -> None:
    rows = []
    for name, (frame, sens, obs, bins) in _tables().items():
        for eps in EPSILONS:
            for disclosure in DISCLOSURES:
                for method in ("search", "randomized"):
                    row = {"table": name, "epsilon": eps, "disclosure": disclosure}
                    row.update(_run(method, frame, sens, obs, bins, eps, disclosure))
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    path = Path(__file__).parent / "results" / "randomized.json"
    path.write_text(json.dumps({"rows": rows}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
