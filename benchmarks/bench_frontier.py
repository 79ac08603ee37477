"""The frontier of a release: is it monotone, does it agree with the alternatives, what does it
cost (issue #42 item 4).

Usage::

    python benchmarks/bench_frontier.py ARRESTS.csv [--epsilons 0.2,0.3,0.4]

``ARRESTS.csv``: the Toronto arrests table of R's carData package (``Arrests``: 5,226 records;
colour sensitive; released, year, age, sex, employed, citizen, checks observed; the row-number
column dropped). For each epsilon, :func:`privwatch.release.find_release` with its defaults
(5 held-out folds, margins grown, frontier and alternatives): the information kept, the verdict,
the frontier (epsilon: nats, met or not, the epsilon its release was searched at when the code
says) and the alternatives at epsilon, with the CPU seconds of each call. Then the same for
the bundled COMPAS records (race sensitive, ``COMPAS_OBSERVED`` binned by ``COMPAS_BINS``) at
epsilon 1. Prints a line per call; ``--json PATH`` writes the figures too.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import pandas as pd

from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.preprocessing import bin_columns
from privwatch.release import find_release


def _run(df: pd.DataFrame, sensitive: str, observed: list[str], eps: float) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        r = find_release(df, sensitive, observed, epsilon=eps)
        cpu = time.process_time() - t0
    frontier = [
        {
            "epsilon": p["epsilon"],
            "nats": round(p["information_nats"], 3),
            "met": p.get("met"),
            "searched_epsilon": p.get("searched_epsilon"),
        }
        for p in r.frontier
    ]
    alternatives = [
        {
            "epsilon": a["epsilon"],
            "nats": round(a["information_nats"], 3),
            "feasible": a["feasible"],
        }
        for a in r.alternatives
        if a["changed"] == "epsilon"
    ]
    return {
        "epsilon": eps,
        "nats": round(r.information_nats, 3),
        "met": r.satisfied,
        "cpu_s": round(cpu, 2),
        "frontier": frontier,
        "alternatives": alternatives,
    }


def _show(name: str, row: dict[str, Any]) -> None:
    front = ", ".join(
        f"{p['epsilon']:g}: {p['nats']:.2f}"
        + ("" if p["met"] is None else (" met" if p["met"] else " not met"))
        + (
            f" (found at {p['searched_epsilon']:g})"
            if p["searched_epsilon"] not in (None, p["epsilon"])
            else ""
        )
        for p in row["frontier"]
    )
    alts = ", ".join(
        f"{a['epsilon']:g}: {a['nats']:.2f}{'' if a['feasible'] else ' (not feasible)'}"
        for a in row["alternatives"]
    )
    print(
        f"{name} eps {row['epsilon']:g}: {row['nats']:.2f} nats, "
        f"{'MET' if row['met'] else 'NOT MET'}, {row['cpu_s']:.1f} s CPU\n"
        f"  frontier {front}\n  alternatives {alts or '-'}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("arrests")
    ap.add_argument("--epsilons", default="0.2,0.3,0.4")
    ap.add_argument("--json")
    args = ap.parse_args()
    arrests = pd.read_csv(args.arrests)
    arrests = arrests.drop(columns=[c for c in ("rownames", "Unnamed: 0") if c in arrests])
    observed = [c for c in arrests.columns if c != "colour"]
    out: dict[str, list[dict[str, Any]]] = {"arrests": [], "compas": []}
    for eps in (float(e) for e in args.epsilons.split(",")):
        out["arrests"].append(_run(arrests, "colour", observed, eps))
        _show("arrests", out["arrests"][-1])
    compas = bin_columns(load_compas(), dict(COMPAS_BINS))
    out["compas"].append(_run(compas, "race", list(COMPAS_OBSERVED), 1.0))
    _show("compas", out["compas"][-1])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
