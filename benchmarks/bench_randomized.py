"""What randomization buys (#41 part B, item 8): the generalisation search against the
randomized release of the flagged set (the LP channel, in place of merging into '*'), the
search with its suppressed cells randomized (``suppression="randomize"``), and ``auto`` (the
most informative met method; run twice: with the search's '*', and with the search
randomizing), on COMPAS and a census-like table, at epsilon 0.5 / 1 / 2, two- and one-sided.

Both run through ``privwatch.audit.run`` on the same records and columns (the randomized
method picked through the registry, as ``--method randomized`` will), 5 folds, seed 0, no
classic checks. Reported per row: information kept (search: H(released cells); randomized:
I(X; Y), and that of merging the same flagged set into '*'), records altered (search: records
suppressed to '*'; randomized: records released as another symbol than their own tuple), the
held-out breach estimate with its 95 % interval, and the verdict.

    python benchmarks/bench_randomized.py  # writes benchmarks/results/randomized.json

Methods (``--methods``): ``search``, ``search_randomize`` (``--suppression randomize``),
``randomized``, ``auto``, ``auto_randomize`` (``--method auto --suppression randomize``).
Records altered: the search's records suppressed; with randomization, records drawn as another
symbol than their own cell (the '*' included); the watchdogs', records merged.
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


VARIANTS = {
    "search": ("search", "star"),
    "search_randomize": ("search", "randomize"),
    "randomized": ("randomized", "star"),
    "auto": ("auto", "star"),
    "auto_randomize": ("auto", "randomize"),
}


def _altered(rel: dict, leak: dict):  # type: ignore[no-untyped-def]
    if "altered_records" in rel:
        return rel["altered_records"]
    if (rel.get("suppression") or {}).get("randomized"):
        return rel["perturbed_records"]
    if rel.get("suppressed_records") is not None:
        return rel["suppressed_records"]
    return None


def _run(variant: str, frame, sens, obs, bins, eps, disclosure):  # type: ignore[no-untyped-def]
    method, suppression = VARIANTS[variant]
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = pw.audit.run(
            source=frame, sensitive=sens, observed=obs, bins=bins, epsilon=eps,
            disclosure=disclosure, folds=5, seed=0, checks=False, method=method,
            suppression=suppression,
        )  # fmt: skip
    seconds = time.perf_counter() - t
    held = r.leakage["held_out"] or {}
    rel = r.leakage["release"] or {}
    out = {
        "method": variant, "status": r.leakage["status"], "seconds": round(seconds, 2),
        "released_by": r.summary.get("release_method", method),
        "breach": held.get("breach_probability"), "breach_ci": held.get("breach_probability_ci"),
        "verdict": held.get("verdict"),
        "nats": r.leakage["utility"]["information_nats"],
        "altered": _altered(rel, r.leakage)
        if _altered(rel, r.leakage) is not None  # the watchdogs: records merged into '*'
        else int((r.release.astype(str) == "*").all(axis=1).sum()),
    }  # fmt: skip
    if "merge_information_nats" in rel:
        out["merge_nats"] = rel["merge_information_nats"]
        out["flagged_records"] = rel.get("flagged_records")
        out["margin"] = rel.get("margin")
    sup = rel.get("suppression")
    if sup:
        out["randomized_suppression"] = sup["randomized"]
        out["star_nats"] = sup["star_information_nats"]
        out["share_of_epsilon"] = sup["share_of_epsilon"]
        out["why"] = sup["why"]
    out["n"] = int(r.summary["n_records"])
    out["input_nats"] = r.leakage["utility"]["information_input_nats"]
    return out


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--tables", nargs="+", default=["compas", "census_like_5000"])
    ap.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    ap.add_argument("--out", default="randomized.json")
    args = ap.parse_args()
    rows = []
    for name, (frame, sens, obs, bins) in _tables().items():
        if name not in args.tables:
            continue
        for eps in args.epsilons:
            for disclosure in DISCLOSURES:
                for method in args.methods:
                    row = {"table": name, "epsilon": eps, "disclosure": disclosure}
                    row.update(_run(method, frame, sens, obs, bins, eps, disclosure))
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    path = Path(__file__).parent / "results" / args.out
    path.write_text(json.dumps({"command": " ".join(sys.argv), "rows": rows}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
