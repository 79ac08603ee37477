"""What does the held-out estimate cost on large count tables? (issue 33, item 1)

Run: python benchmarks/bench_heldout_cost.py [--case small|large|both] [--repeat 2]

Synthetic count tables, shaped like an audit's (``CountTable``: tuples x sensitive values x
folds), and synthetic releases (each tuple alone, merged with the tuples that share all but its
last column, or suppressed, by its record count), timed through
``release.heldout.estimate_breach`` (the held-out figures of a release whose fold releases are
given; the searches are not timed). Cases:

- ``small``: 100,000 tuples, ~1 M records, 4 sensitive values, 5 folds, ~50,000 cells;
- ``large``: the shape of the 10^8-row audit: 10^8 records over ~1.2 M tuples, 4 sensitive
  values, 5 folds, ~480,000 cells.

Per case: the first call (fits the table's tuple model: prior family chosen by cross-fitted
score, G, replicates) and the next calls on the same table with other releases (the search's
margins and alternatives reuse the fit): each timed, with the figures it gave.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from privwatch.release.cells import CountTable, LiftBox
from privwatch.release.heldout import estimate_breach

RESULTS = Path(__file__).parent / "results"
CASES = {
    "small": {"sizes": (12, 10, 10, 8, 6, 5), "records": 1_000_000, "tuples": 100_000, "q": 0.55},
    "large": {"sizes": (20, 16, 12, 10, 8, 8), "records": 10**8, "tuples": 1_500_000, "q": 0.7},
}


def make_table(sizes: tuple[int, ...], records: int, tuples: int, seed: int = 0) -> CountTable:
    """``tuples`` tuples of a product of categorical columns (skewed margins), ``records``
    records spread over them (lognormal weights), 4 sensitive values whose logits are main
    effects plus a per-tuple residual, split over 5 folds at random."""
    rng = np.random.default_rng(seed)
    space = int(np.prod(sizes))
    flat = np.sort(rng.choice(space, size=min(tuples, space), replace=False))
    codes = np.stack(np.unravel_index(flat, sizes), axis=1).astype(np.int64)
    margins = [rng.dirichlet(np.full(k, 3.0)) for k in sizes]
    w = np.prod([m[codes[:, j]] for j, m in enumerate(margins)], axis=0)
    w *= rng.lognormal(0.0, 0.7, len(w))
    n = rng.multinomial(records, w / w.sum())
    effects = [rng.normal(0, 0.5, (k, 4)) for k in sizes]
    logits = sum(e[codes[:, j]] for j, e in enumerate(effects)) + rng.normal(0, 0.4, (len(w), 4))
    logits += np.log([0.55, 0.25, 0.15, 0.05])
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    counts = np.zeros((len(w), 4, 5))
    rest = n.astype(np.int64)
    left = np.ones(len(w))
    for s in range(4):  # multinomial per tuple, one binomial per value
        share = np.clip(p[:, s] / np.maximum(left, 1e-12), 0.0, 1.0) if s < 3 else np.ones(len(w))
        ks = rng.binomial(rest, share)
        rest, left = rest - ks, left - p[:, s]
        fold_left = ks
        for f in range(5):
            kf = rng.binomial(fold_left, 1.0 / (5 - f)) if f < 4 else fold_left
            counts[:, s, f] = kf
            fold_left = fold_left - kf
    seen = counts.sum((1, 2)) > 0  # an audit's table holds the tuples it saw
    codes, counts = codes[seen], counts[seen]
    values = [(f"v{i}",) for i in range(4)]
    observed = tuple(f"c{j}" for j in range(len(sizes)))
    return CountTable(observed, ("s",), codes, counts, values)


def make_release(table: CountTable, q_keep: float, q_merge: float) -> tuple[np.ndarray, int, int]:
    """Cells: a tuple whose records are above the ``q_keep`` quantile alone; one above the
    ``q_merge`` quantile merged with the tuples sharing all but its last column; the rest
    suppressed (cell 0, ``*``)."""
    n = table.total().sum(1)
    keep, merge = np.quantile(n, [q_keep, q_merge])
    codes = table.codes
    cell = np.zeros(len(n), dtype=np.int64)
    alone = n >= keep
    merged = ~alone & (n >= merge)
    cell[alone] = 1 + np.arange(int(alone.sum()))
    parent = np.unique(codes[merged][:, :-1], axis=0, return_inverse=True)[1].reshape(-1)
    cell[merged] = 1 + int(alone.sum()) + parent
    return cell, int(cell.max()) + 1, 0


def run_case(name: str, repeat: int) -> dict[str, object]:
    spec = CASES[name]
    t0 = time.perf_counter()
    table = make_table(spec["sizes"], spec["records"], spec["tuples"])  # type: ignore[arg-type]
    built = time.perf_counter() - t0
    n = table.total().sum(1)
    box = LiftBox(table.total().sum(0), table.marginals(), 1.0, "both")
    per_call = []
    q = float(spec["q"])  # type: ignore[arg-type]
    shifts = [0.0, 0.05, -0.05, 0.1][: repeat + 1]
    for i, shift in enumerate(shifts):
        cell_of, n_cells, star = make_release(table, q + shift, (q + shift) / 2)
        folds = [(cell_of, n_cells)] * 5
        t = time.perf_counter()
        held = estimate_breach(
            table, box, folds, (cell_of, n_cells, star), (0.0, 0.0, table.n_records),
            draws=2000, replicates=20, rng=np.random.default_rng(i),
        )  # fmt: skip
        dt = time.perf_counter() - t
        row = {
            "call": i + 1,
            "seconds": dt,
            "cells": n_cells,
            "estimate": held.breach_probability,
            "interval": list(held.breach_probability_ci),
            "undecided_cells": held.undecided_cells,
        }
        per_call.append(row)
        print(f"{name}: call {i + 1}: {json.dumps(row)}", flush=True)
    return {
        "tuples": int((n > 0).sum()),
        "records": int(n.sum()),
        "values": 4,
        "folds": 5,
        "build_s": built,
        "calls": per_call,
    }


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=["small", "large", "both"], default="both")
    ap.add_argument("--repeat", type=int, default=2, help="further calls on the same table")
    args = ap.parse_args(argv)
    names = ["small", "large"] if args.case == "both" else [args.case]
    out = {name: run_case(name, args.repeat) for name in names}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "heldout_cost.json").write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
