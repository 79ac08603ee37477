"""Is the watchdogs' held-out verdict right? Issue 41 part A: the plug-in watchdog (Hsu et al.)
and its (epsilon, delta) relaxation (Sadeghi et al. Alg. 1) against known populations.

Run: python benchmarks/bench_heldout_calibration.py --method watchdog relaxed [--seeds 50]
     [--n 5000] [--settings compas rare5 planted half]
     python benchmarks/bench_heldout_calibration.py --method randomized [--seeds 30]
     (the LP randomization of the flagged set, ``randomize_release``; its truth is that of the
     fixed channel: symbol y's true mass sum_x p(x) w[x, y] and posterior
     sum_x p(s, x) w[x, y] / mass; results in heldout_calibration_randomized.json; the
     ``merged`` column is then the share of records drawn as another symbol than their own)
     python benchmarks/bench_heldout_calibration.py --method search_randomize [--seeds 20]
     (the search with ``suppression="randomize"``; truth of the whole release's channel, the
     kept cells as one-symbol rows; results in heldout_calibration_search_randomize.json)
(or this file directly, with the same options but ``--method``).

Per seed, n records are drawn from a known pmf p(s, x) (``Pmf`` of bench_heldout_calibration),
counted per observed tuple (:class:`privwatch.release.merged.TupleUnits`, 5 folds) and released
by :func:`privwatch.release.merged.merge_to_pass`, the audit's own steps (``watchdog``: flags at
epsilon, merged into ``*``, tolerance 0.05; ``relaxed``: Alg. 1 with delta 0.05, tolerance
delta), margins grown until the held-out verdict is met. The TRUE breach share of the release
is computed from the pmf: every tuple of the pmf's support goes to its released cell (a kept
tuple its own cell; a merged tuple, or one never drawn, the ``*`` cell, as ``apply`` maps it),
each cell's true p(s | cell) is compared with the true p(s) (|log-lift| > epsilon) and the
masses of the breaking cells are summed: the share of the released records' population whose
released cell breaks epsilon, the quantity the held-out interval estimates (at least Sadeghi's
eq. 11 breach probability). Recorded: the estimate, its 95 % interval, the verdict (MET iff the
upper end <= the tolerance), and the information kept.

Settings: ``compas`` the bundled COMPAS (binned) as a smoothed empirical pmf, epsilon 0.92
(the issue's population); ``rare5`` three values, one at 5 %, spread lifts, epsilon 1;
``planted`` a ``half``-like population (every lift within epsilon / 2) with 6 % of the mass
moved onto 40 tuples where a 1 %-share value has ten times its share, epsilon 1; ``half``
every true lift within epsilon / 2 (truth 0 for any partition), epsilon 1; ``gross`` 12,800
tuples whose p(s | x) lies just beyond the box (lift 0.50 at epsilon 0.4): what a plug-in
watchdog keeps breaks in truth.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_heldout_calibration import Pmf, compas_pmf, synthetic_pmf

from privwatch.release import find_release
from privwatch.release.merged import TupleUnits, merge_to_pass
from privwatch.release.randomized import channel_weights, randomize_release

RESULTS = Path(__file__).parent / "results"
DELTA = 0.05
TOLERANCE = 0.05


def _spread_pmf(name: str, prior: list[float], scales: list[float], seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    sizes = (5, 4, 4, 3)
    margins = [rng.dirichlet(np.full(k, 1.3)) for k in sizes]
    grid = np.stack(np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij"), -1)
    grid = grid.reshape(-1, len(sizes))
    px = np.prod([m[grid[:, j]] for j, m in enumerate(margins)], axis=0)
    px *= rng.lognormal(0, 0.5, len(px))
    px /= px.sum()
    u = np.zeros((len(px), len(prior)))
    for j, sc in enumerate(scales):
        u[:, j] = rng.normal(0, sc, len(px)) if sc > 0 else 0.0
    tuples = np.array([[f"{chr(97 + j)}{v}" for j, v in enumerate(r)] for r in grid], dtype=object)
    return px, u, tuples, rng


def rare5_pmf() -> Pmf:
    """Three values, one at 5 %, per-tuple lifts spread (some tuples break epsilon 1)."""
    prior = [0.65, 0.30, 0.05]
    px, u, tuples, _ = _spread_pmf("rare5", prior, [0.0, 0.8, 0.9], 11)
    post = np.asarray(prior) * np.exp(u)
    post /= post.sum(1, keepdims=True)
    p = (post * px[:, None]).T
    return Pmf("rare5", [f"c{j}" for j in range(4)], tuples, p, ["s0", "s1", "s2"], 1.0)


def planted_pmf() -> Pmf:
    """Lifts within epsilon / 2 for three values (one at 1 %), then 6 % of the mass on 40
    tuples where the 1 % value has ten times its share (a planted breach)."""
    prior = np.array([0.69, 0.30, 0.01])
    px, _, tuples, rng = _spread_pmf("planted", list(prior), [0.0], 12)
    u = rng.uniform(-0.35, 0.35, (len(px), 2))
    post = np.column_stack([prior[0] * np.ones(len(px)), prior[1] * np.exp(u[:, 0]),
                            prior[2] * np.exp(u[:, 1])])  # fmt: skip
    post /= post.sum(1, keepdims=True)
    planted = rng.choice(len(px), 40, replace=False)
    rest = np.setdiff1d(np.arange(len(px)), planted)
    px = px.copy()
    px[rest] *= 0.94 / px[rest].sum()
    px[planted] = 0.06 / 40
    post[planted, 2] = 0.10
    post[planted, :2] = 0.90 * prior[:2] / prior[:2].sum()
    p = (post * px[:, None]).T
    return Pmf("planted", [f"c{j}" for j in range(4)], tuples, p, ["s0", "s1", "s2"], 1.0)


def truth(pmf: Pmf, units: TupleUnits, keep: np.ndarray) -> float:
    """True breach share of the partition (module docstring)."""
    key = pd.MultiIndex.from_frame(units.tuples[pmf.columns].astype(str))
    pos = key.get_indexer(pd.MultiIndex.from_arrays(pmf.tuples.T.astype(str)))
    kept = (pos >= 0) & keep[np.maximum(pos, 0)]
    cell = np.where(kept, np.arange(len(pos)), len(pos))  # own cell, or '*'
    cell = pd.factorize(cell)[0]
    joint = np.zeros((int(cell.max()) + 1, pmf.p.shape[0]))
    np.add.at(joint, cell, pmf.p.T)
    mass = joint.sum(1)
    prior = pmf.p.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = np.abs(np.log(joint / mass[:, None]) - np.log(prior))
    return float(mass[(lift.max(1) > pmf.epsilon + 1e-12) & (mass > 0)].sum())


def channel_truth(pmf: Pmf, tuples: pd.DataFrame, weights) -> float:  # type: ignore[no-untyped-def]
    """True breach share of a release drawn through a fixed channel: ``weights[row, symbol]``
    over the rows of ``tuples`` (the last symbol ``*``); a pmf tuple never drawn goes to ``*``.
    Symbol y's true mass is sum_x p(x) w[x, y] and its posterior sum_x p(s, x) w[x, y] / mass."""
    key = pd.MultiIndex.from_frame(tuples[pmf.columns].astype(str))
    pos = key.get_indexer(pd.MultiIndex.from_arrays(pmf.tuples.T.astype(str)))
    w = weights.toarray()
    star = np.zeros(w.shape[1])
    star[-1] = 1.0
    rows = np.where(pos[:, None] >= 0, w[np.maximum(pos, 0)], star)  # (pmf tuples, symbols)
    joint = pmf.p @ rows  # (s, symbols)
    mass = joint.sum(0)
    prior = pmf.p.sum(1)
    live = mass > 1e-300
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = np.abs(np.log(joint[:, live] / mass[live]) - np.log(prior)[:, None])
    return float(mass[live][lift.max(0) > pmf.epsilon + 1e-12].sum())


def run_randomized(pmf: Pmf, n: int, seed: int) -> dict[str, object]:
    """The randomized method (LP channel of the flagged set, ``randomize_release``, the audit's
    own steps: 5 folds, its margin ladder) on n records of ``pmf``."""
    df = pmf.sample(n, np.random.default_rng(10_000 + seed))
    t0 = time.perf_counter()
    done = randomize_release(df, "s", pmf.columns, pmf.epsilon, folds=5, seed=seed,
                             tolerance=TOLERANCE)  # fmt: skip
    held = done.held_out
    w, _ = channel_weights(done.channel, len(done.tuples))
    return {
        "setting": pmf.name, "method": "randomized", "n": n, "seed": seed,
        "seconds": time.perf_counter() - t0,
        "truth": channel_truth(pmf, done.tuples, w),
        "estimate": None if held is None else held.breach_probability,
        "ci": None if held is None else list(held.breach_probability_ci),
        "verdict": done.verdict if held is not None else "nothing kept",
        "met": done.satisfied,
        "information_nats": done.information_nats,
        "information_input_nats": done.information_input_nats,
        "merged_share": done.altered_records / n,
        "rung": list(done.margin),
    }  # fmt: skip


def run_search_randomize(pmf: Pmf, n: int, seed: int) -> dict[str, object]:
    """The search with its suppressed cells randomized (``suppression="randomize"``, aimed as
    the audit aims); the truth is the fixed channel's over the whole release."""
    df = pmf.sample(n, np.random.default_rng(10_000 + seed))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = find_release(df, "s", pmf.columns, epsilon=pmf.epsilon, folds=5, rng=seed,
                         suggest=False, frontier_epsilons=[], suppression="randomize")  # fmt: skip
    sc, held = r.suppression, r.held_out
    return {
        "setting": pmf.name, "method": "search_randomize", "n": n, "seed": seed,
        "seconds": time.perf_counter() - t0,
        "truth": channel_truth(pmf, sc.raw, sc.weights),
        "estimate": None if held is None else held.breach_probability,
        "ci": None if held is None else list(held.breach_probability_ci),
        "verdict": r.held_out_verdict if held is not None else "nothing kept",
        "met": r.satisfied,
        "randomized": sc.randomized,
        "information_nats": r.information_nats,
        "information_input_nats": r.information_input_nats,
        "merged_share": sc.altered_records / n,
    }  # fmt: skip


def run_one(pmf: Pmf, method: str, n: int, seed: int) -> dict[str, object]:
    if method == "randomized":
        return run_randomized(pmf, n, seed)
    if method == "search_randomize":
        return run_search_randomize(pmf, n, seed)
    df = pmf.sample(n, np.random.default_rng(10_000 + seed))
    t0 = time.perf_counter()
    units = TupleUnits.count(df, ["s"], pmf.columns, 5, seed)
    delta = DELTA if method == "relaxed" else None
    found = merge_to_pass(units, pmf.epsilon, "both", tolerance=DELTA if delta else TOLERANCE,
                          delta=delta, rng=seed)  # fmt: skip
    held = found.held
    return {
        "setting": pmf.name, "method": method, "n": n, "seed": seed,
        "seconds": time.perf_counter() - t0,
        "truth": truth(pmf, units, found.keep),
        "estimate": None if held is None else held.breach_probability,
        "ci": None if held is None else list(held.breach_probability_ci),
        "verdict": found.verdict if held is not None else "nothing kept",
        "met": found.satisfied,
        "information_nats": found.information_nats,
        "information_input_nats": found.information_input_nats,
        "merged_share": float(found.record_flags().mean()),
        "breach_in_sample": found.breach_in_sample,
        "rung": [found.rung.confidence, found.rung.budget, found.rung.kept_share],
        "rungs_tried": len(found.tried),
    }  # fmt: skip


def summarise(rows: list[dict[str, object]], tol: float) -> dict[str, object]:
    checked = [r for r in rows if r["estimate"] is not None]
    t = np.array([r["truth"] for r in checked], dtype=float)
    e = np.array([r["estimate"] for r in checked], dtype=float)
    ci = np.array([r["ci"] for r in checked], dtype=float).reshape(-1, 2)
    truth0 = [r["met"] for r in rows if r["truth"] == 0]
    # the same, leaving out the seeds whose release keeps nothing (every unit merged): the audit
    # calls those NOT MET by its own rule (no information kept), whatever their truth
    truth0_kept = [r["met"] for r in checked if r["truth"] == 0]
    return {
        "seeds": len(rows),
        "nothing_kept": len(rows) - len(checked),
        "truth": float(t.mean()) if len(t) else None,
        "estimate": float(e.mean()) if len(e) else None,
        "bias": float(e.mean() - t.mean()) if len(e) else None,
        "mean_abs_error": float(np.abs(e - t).mean()) if len(e) else None,
        "coverage": float(np.mean((ci[:, 0] <= t + 1e-12) & (t <= ci[:, 1] + 1e-12)))
        if len(e) else None,
        "interval_width": float((ci[:, 1] - ci[:, 0]).mean()) if len(e) else None,
        "met": float(np.mean([r["met"] for r in rows])),
        "seeds_truth_0": len(truth0),
        "met_where_truth_0": float(np.mean(truth0)) if truth0 else None,
        "seeds_truth_0_kept": len(truth0_kept),
        "met_where_truth_0_kept": float(np.mean(truth0_kept)) if truth0_kept else None,
        "seeds_truth_over_2tol": int(sum(r["truth"] > 2 * tol for r in rows)),
        "met_where_truth_over_2tol": int(sum(r["met"] and r["truth"] > 2 * tol for r in rows)),
        "truth_of_met_max": max([r["truth"] for r in rows if r["met"]], default=None),
        "information_nats": float(np.mean([r["information_nats"] for r in rows])),
        "merged_share": float(np.mean([r["merged_share"] for r in rows])),
        "seconds": float(np.mean([r["seconds"] for r in rows])),
    }  # fmt: skip


def table(summary: dict[str, dict[str, object]]) -> str:
    lines = [
        "| method | setting | n | seeds | mean truth | mean estimate | bias | 95 % covers | MET "
        "| MET where truth 0 | ... of those keeping something | MET where truth > 2x tol "
        "| nats kept | merged |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def f(v: object, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    for key, s in summary.items():
        method, setting, n = key.split("@")
        t0 = f"{f(s['met_where_truth_0'], '.0%')} of {s['seeds_truth_0']}"
        t0k = f"{f(s.get('met_where_truth_0_kept'), '.0%')} of {s.get('seeds_truth_0_kept', '-')}"
        t2 = f"{s['met_where_truth_over_2tol']} of {s['seeds_truth_over_2tol']}"
        lines.append(
            f"| {method} | {setting} | {n} | {s['seeds']} | {f(s['truth'], '.3f')} | "
            f"{f(s['estimate'], '.3f')} | {f(s['bias'], '+.3f')} | {f(s['coverage'], '.0%')} | "
            f"{f(s['met'], '.0%')} | {t0} | {t0k} | {t2} | {f(s['information_nats'], '.2f')} | "
            f"{f(s['merged_share'], '.1%')} |"
        )
    return "\n".join(lines)


PMFS = {"compas": compas_pmf, "rare5": rare5_pmf, "planted": planted_pmf,
        "half": lambda: synthetic_pmf("half"), "gross": lambda: synthetic_pmf("gross")}  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", nargs="+", default=["watchdog", "relaxed"])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--n", type=int, nargs="+", default=[5000])
    ap.add_argument("--settings", nargs="+", default=list(PMFS))
    ap.add_argument("--out", default=None, help="results file name (default by method)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    pmfs = {s: PMFS[s]() for s in args.settings}
    rows, summary = [], {}
    for method in args.method:
        tol = DELTA if method == "relaxed" else TOLERANCE
        for n in args.n:
            for name, pmf in pmfs.items():
                part = [run_one(pmf, method, n, s) for s in range(args.seeds)]
                rows += part
                summary[f"{method}@{name}@{n}"] = summarise(part, tol)
                print(f"{method} {name} n={n}: {json.dumps(summary[f'{method}@{name}@{n}'])}",
                      flush=True)  # fmt: skip
    wall = time.perf_counter() - start
    doc = {
        "command": " ".join(["bench_heldout_calibration.py", *(argv or sys.argv[1:])]),
        "wall_s": wall, "delta": DELTA, "tolerance": TOLERANCE,
        "summary": summary, "runs": rows,
    }  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    stem = "heldout_calibration_" + (
        args.method[0] if args.method in (["randomized"], ["search_randomize"]) else "merged"
    )
    out = RESULTS / (args.out or f"{stem}.json")
    out.write_text(json.dumps(doc, indent=1, default=float))
    print(table(summary))
    print(f"\nwall time {wall:.0f} s; wrote {out}")
    return doc


if __name__ == "__main__":
    main()
