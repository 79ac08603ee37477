"""Is the held-out breach figure right? A simulation study against known populations (issue 32).

Run: python benchmarks/bench_heldout_calibration.py [--seeds 20] [--n 5000 30000] [--quick]
     [--settings compas rare half edge gross] [--aim]
     python benchmarks/bench_heldout_calibration.py --method watchdog relaxed [--seeds 50]
     (the plug-in watchdog and its (epsilon, delta) relaxation: bench_calibration_merged.py)

``--aim``: the search aims at the held-out verdict as the audit's does (a credible margin grown
until the check passes, ``release/search/_margin.py``), so the verdicts are the product's and
each truth is that of the release the audit would publish (results in
``heldout_calibration_aim.json``).

Each setting is a known joint pmf p(s, x) over a few categorical observed columns. Per seed, n
records are drawn from it, ``find_release(df, "s", observed, epsilon=..., folds=5,
suggest=False, aim=False)`` searches the release (automatic hierarchies), and the TRUE breach
share of the published release is computed from the pmf: every tuple of the pmf's support is
mapped to its released cell as the saved mechanism's ``apply`` maps it (a tuple in
``ReleaseResult.mapping`` to its released labels, any other tuple to ``*`` in every column),
each cell's true p(s | cell) is compared with the true p(s) (|log-lift| > epsilon two-sided),
and the masses of the breaking cells are summed. The held-out figures of the new estimator
(``release/heldout/``) and of the estimator it replaced (a Dirichlet((S/2) p(s)) posterior per
held-out cell, copied below as the baseline and run on the same searches) are recorded with
their verdicts under the rule MET iff the interval's upper end <= 0.05. On the COMPAS setting
every seed is also checked with 10 folds (the same release) to see whether the verdict depends
on the number of folds.

Settings (``planted``, issue 41: 6 % of the mass on 40 tuples where a 1 %-share value has ten
times its share, epsilon 1; from bench_calibration_merged.py):
``compas`` the bundled COMPAS (binned as ``COMPAS_BINS``) as a smoothed empirical pmf,
epsilon 0.92 two-sided; ``rare`` three values, one about 1 %, epsilon 1; ``half`` every tuple's
true lift within epsilon / 2 (breach 0 for any release), epsilon 1; ``edge`` every true lift
within 0.46 at epsilon 0.5 (breach 0); ``gross`` 12,800 tuples whose p(s | x) lies just beyond
the box (lift 0.50 at epsilon 0.4), so that the cells the search releases by chance break.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import privwatch.release.search._one_search as release_api  # where the search builds its check
from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.preprocessing import bin_columns
from privwatch.release import ReleaseNotMetWarning, find_release
from privwatch.release.cells import CountTable, LiftBox, cell_counts
from privwatch.release.heldout import TOLERANCE, HeldOut
from privwatch.release.search._global_recoding import ReleaseSpace, release_cells
from privwatch.release.search._held_out import HeldOutCheck

RESULTS = Path(__file__).parent / "results"


@dataclass(frozen=True)
class Pmf:
    """A known population: p[s, x] over the tuples ``tuples`` of the columns ``columns``."""

    name: str
    columns: list[str]
    tuples: np.ndarray  # (n_tuples, n_columns) of str
    p: np.ndarray
    values: list[str]
    epsilon: float

    def sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        flat = rng.multinomial(n, self.p.ravel())
        idx = np.repeat(np.arange(flat.size), flat)
        rng.shuffle(idx)
        s, x = np.divmod(idx, self.p.shape[1])
        df = pd.DataFrame(self.tuples[x], columns=self.columns)
        df["s"] = np.asarray(self.values, dtype=object)[s]
        return df

    def truth(self, mapping: pd.DataFrame) -> float:
        """True breach share of a release given by its mapping (unseen tuples to ``*``)."""
        key = pd.MultiIndex.from_frame(mapping[self.columns].astype(str))
        pos = key.get_indexer(pd.MultiIndex.from_arrays(self.tuples.T.astype(str)))
        labels = [
            np.where(pos >= 0, mapping[f"release_{c}"].to_numpy(dtype=object)[pos], "*")
            for c in self.columns
        ]
        cell = pd.factorize(pd.MultiIndex.from_arrays(labels))[0]
        joint = np.zeros((int(cell.max()) + 1, self.p.shape[0]))
        np.add.at(joint, cell, self.p.T)
        mass = joint.sum(1)
        prior = self.p.sum(1)
        with np.errstate(divide="ignore"):
            lift = np.abs(np.log(joint / mass[:, None]) - np.log(prior))
        return float(mass[lift.max(1) > self.epsilon + 1e-12].sum())


def compas_pmf(pseudo: float = 0.05) -> Pmf:
    """The bundled COMPAS, binned, as its empirical pmf plus ``pseudo`` records per cell of
    the product of the columns' values (a smoothed empirical pmf)."""
    df = bin_columns(load_compas(), COMPAS_BINS)
    cats = [sorted(df[c].astype(str).unique()) for c in COMPAS_OBSERVED]
    grid = pd.MultiIndex.from_product(cats).to_frame(index=False).to_numpy(dtype=object)
    races = sorted(df["race"].unique())
    pos = pd.MultiIndex.from_arrays(grid.T).get_indexer(
        pd.MultiIndex.from_frame(df[COMPAS_OBSERVED].astype(str))
    )
    counts = np.zeros((len(races), len(grid)))
    np.add.at(counts, (pd.Index(races).get_indexer(df["race"]), pos), 1.0)
    p = (counts + pseudo) / (counts + pseudo).sum()
    return Pmf("compas", list(COMPAS_OBSERVED), grid, p, races, 0.92)


def _max_lift(p: np.ndarray) -> float:
    post = (p / p.sum(0)).T
    return float(np.abs(np.log(post) - np.log(p.sum(1))).max())


def synthetic_pmf(name: str) -> Pmf:
    """A product-like p(x) over categorical columns and p(s | x) = prior e^u / normaliser, with
    u drawn per tuple; ``max_lift`` shrinks u until every true lift is within it."""
    spec: dict[str, tuple[tuple[int, ...], list[float], float, float | None]] = {
        "rare": ((5, 4, 4, 3), [0.6, 0.39, 0.01], 1.0, None),
        "half": ((5, 4, 4, 3), [0.7, 0.3], 1.0, 0.5),
        "edge": ((5, 4, 4, 3), [0.6, 0.4], 0.5, 0.46),
        "gross": ((10, 10, 8, 8, 2), [0.5, 0.5], 0.4, None),
    }
    sizes, prior, epsilon, max_lift = spec[name]
    rng = np.random.default_rng({"rare": 1, "half": 2, "edge": 3, "gross": 4}[name])
    margins = [rng.dirichlet(np.full(k, 1.3)) for k in sizes]
    grid = np.stack(np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij"), -1)
    grid = grid.reshape(-1, len(sizes))
    px = np.prod([m[grid[:, j]] for j, m in enumerate(margins)], axis=0)
    px *= rng.lognormal(0, 0.5, len(px))
    px /= px.sum()
    u = np.zeros((len(px), len(prior)))
    if name == "rare":
        u[:, 1], u[:, 2] = rng.normal(0, 1.2, len(px)), rng.normal(0, 0.8, len(px))
    elif name == "half":
        u[:, 1] = rng.uniform(-1, 1, len(px))
    elif name == "edge":  # most tuples near the edge on either side
        u[:, 1] = rng.choice([-1, 1], len(px)) * rng.beta(4, 1, len(px))
    else:
        u[:, 1] = rng.choice([-0.8, 0.8], len(px))

    def build(scale: float) -> np.ndarray:
        post = np.asarray(prior) * np.exp(scale * u)
        post /= post.sum(1, keepdims=True)
        return np.asarray((post * px[:, None]).T)

    p = build(1.0)
    if max_lift is not None and _max_lift(p) > max_lift:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _max_lift(build(mid)) <= max_lift else (lo, mid)
        p = build(lo)
    tuples = np.array([[f"{chr(97 + j)}{v}" for j, v in enumerate(r)] for r in grid], dtype=object)
    values = [f"s{i}" for i in range(len(prior))]
    return Pmf(name, [f"c{j}" for j in range(len(sizes))], tuples, p, values, epsilon)


def _pmf(name: str) -> Pmf:
    """The setting ``name``: ``compas``, a synthetic one, or ``planted`` (6 % of the mass on 40
    tuples where a 1 %-share value has ten times its share: bench_calibration_merged.py)."""
    if name == "compas":
        return compas_pmf()
    if name == "planted":
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_calibration_merged import planted_pmf

        return planted_pmf()
    return synthetic_pmf(name)


def legacy_held_out(
    space: ReleaseSpace,
    table: CountTable,
    fit: Callable[[np.ndarray], object],
    box: LiftBox,
    rng: np.random.Generator,
    draws: int = 400,
) -> tuple[float, float, float]:
    """The estimator this study replaces (privwatch before issue 32): a Dirichlet(n + (S/2) p(s))
    posterior per held-out cell, the share of posterior draws beyond epsilon counted as breach.
    Returns (mean, 2.5 %, 97.5 %)."""
    cells = []
    for k in range(table.counts.shape[2]):
        cell_of, n_cells = release_cells(space, fit(table.total(exclude_fold=k)))
        ct = cell_counts(cell_of, n_cells, table.total(only_fold=k))
        cells.append(ct[ct.sum(1) > 0])
    ct = np.concatenate(cells, axis=0)
    total = table.total().sum(0)
    alpha = 0.5 * ct.shape[1] * total / total.sum()
    size = ct.sum(1)
    post = rng.gamma(ct[None] + alpha, size=(draws, *ct.shape))
    post /= post.sum(-1, keepdims=True)
    breach = ((box.worst(post) > box.epsilon + 1e-12) * size).sum(1) / size.sum()
    q = np.quantile(breach, [0.025, 0.975], method="inverted_cdf")
    return float(breach.mean()), float(q[0]), float(q[1])


def verdict(lo: float, hi: float) -> str:
    return "met" if hi <= TOLERANCE else ("breach" if lo > TOLERANCE else "inconclusive")


def run_one(
    pmf: Pmf, n: int, seed: int, folds: int, legacy: bool, aim: bool = False
) -> dict[str, object]:
    """One seed: search, true breach, the new held-out figures (and the baseline's). ``aim``:
    the search aims at the held-out verdict as the audit's does (a margin grown until the
    check passes), so the verdict is the product's and the truth is that of the release the
    audit would publish."""
    df = pmf.sample(n, np.random.default_rng(10_000 + seed))
    record: dict[str, object] = {"setting": pmf.name, "n": n, "seed": seed, "folds": folds}
    record["aim"] = aim
    record["estimator_s"] = 0.0

    class Timed(HeldOutCheck):  # the search's own check, timed, with the baseline beside it
        def __init__(self, space, table, fit, box, **kw):  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            super().__init__(space, table, fit, box, **kw)
            record["estimator_s"] += time.perf_counter() - t0
            self._legacy_args = (space, table, fit, box)

        def figures(self) -> HeldOut:
            t0 = time.perf_counter()
            held = super().figures()
            record["estimator_s"] += time.perf_counter() - t0
            if legacy:  # the published release's cells on each fold's counts (no refits)
                t0 = time.perf_counter()
                old = legacy_held_out(*self._legacy_args, np.random.default_rng(seed))
                record["legacy_s"] = time.perf_counter() - t0
                record["legacy"], record["legacy_ci"] = old[0], [old[1], old[2]]
            return held

    real = release_api.HeldOutCheck
    release_api.HeldOutCheck = Timed  # type: ignore[misc]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseNotMetWarning)
            t0 = time.perf_counter()
            res = find_release(
                df,
                "s",
                pmf.columns,
                epsilon=pmf.epsilon,
                folds=folds,
                suggest=False,
                rng=seed,
                aim=aim,  # False: the estimator judged on the search's own release
            )
            record["audit_s"] = time.perf_counter() - t0
    finally:
        release_api.HeldOutCheck = real  # type: ignore[misc]
    held: HeldOut | None = res.held_out
    record["truth"] = pmf.truth(res.mapping)
    record["information_nats"] = res.information_nats
    if held is None:  # a release that keeps nothing is not checked (aim only): NOT MET
        assert aim, "without aim every searched release is checked"
        record["estimate"], record["ci"], record["verdict"] = None, None, "nothing kept"
        return record
    record["estimate"] = held.breach_probability
    record["ci"] = list(held.breach_probability_ci)
    record["verdict"] = held.verdict(TOLERANCE)
    return record


def summarise(rows: list[dict[str, object]]) -> dict[str, float]:
    """Per setting: mean truth, estimate, bias, coverage, MET share (new and baseline). Bias,
    coverage and width are over the checked releases (with aim, a release that keeps nothing
    is not checked; it counts as NOT MET)."""
    checked = [r for r in rows if r["estimate"] is not None]
    t = np.array([r["truth"] for r in checked], dtype=float)
    e = np.array([r["estimate"] for r in checked], dtype=float)
    ci = np.array([r["ci"] for r in checked], dtype=float).reshape(-1, 2)
    out = {
        "seeds": len(rows),
        "nothing_kept": len(rows) - len(checked),
        "truth": float(t.mean()),
        "truth_max": float(t.max()),
        "estimate": float(e.mean()),
        "bias": float(e.mean() - t.mean()),
        "mean_abs_error": float(np.abs(e - t).mean()),
        "coverage": float(np.mean((ci[:, 0] <= t + 1e-12) & (t <= ci[:, 1] + 1e-12))),
        "interval_width": float((ci[:, 1] - ci[:, 0]).mean()),
        "met": float(np.mean([r["verdict"] == "met" for r in rows])),
        "breach_confirmed": float(np.mean([r["verdict"] == "breach" for r in rows])),
        "met_where_truth_0": _share([r["verdict"] == "met" for r in rows if r["truth"] == 0]),
        "met_where_truth_over_2tol": int(
            sum(r["verdict"] == "met" and r["truth"] > 2 * TOLERANCE for r in rows)
        ),
        "seeds_truth_over_2tol": int(sum(r["truth"] > 2 * TOLERANCE for r in rows)),
        "estimator_s": float(np.mean([r["estimator_s"] for r in rows])),
    }
    if all("legacy" in r for r in rows):
        le = np.array([r["legacy"] for r in rows], dtype=float)
        lci = np.array([r["legacy_ci"] for r in rows], dtype=float)
        out |= {
            "legacy_estimate": float(le.mean()),
            "legacy_bias": float(le.mean() - t.mean()),
            "legacy_coverage": float(np.mean((lci[:, 0] <= t) & (t <= lci[:, 1]))),
            "legacy_met": float(np.mean(lci[:, 1] <= TOLERANCE)),
            "legacy_not_met_old_rule": float(np.mean(lci[:, 0] > TOLERANCE)),
        }
    return out


def _share(flags: list[bool]) -> float | None:
    return float(np.mean(flags)) if flags else None


def table(summary: dict[str, dict[str, float]]) -> str:
    head = (
        "| setting | n | seeds | mean truth | new: mean estimate | bias | 95 % covers | MET "
        "| confirmed breach | old: mean estimate | bias | covers | old rule NOT MET |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for key, s in summary.items():
        name, n = key.rsplit("@", 1)
        lines.append(
            f"| {name} | {n} | {s['seeds']} | {s['truth']:.3f} | {s['estimate']:.3f} | "
            f"{s['bias']:+.3f} | {s['coverage']:.0%} | {s['met']:.0%} | "
            f"{s['breach_confirmed']:.0%} | {s.get('legacy_estimate', float('nan')):.3f} | "
            f"{s.get('legacy_bias', float('nan')):+.3f} | {s.get('legacy_coverage', 0):.0%} | "
            f"{s.get('legacy_not_met_old_rule', 0):.0%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, object]:
    argv = sys.argv[1:] if argv is None else argv
    if "--method" in argv:  # the watchdogs (#41 part A): bench_calibration_merged.py
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_calibration_merged import main as merged

        return merged(argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--n", type=int, nargs="+", default=[5000, 30000])
    ap.add_argument("--settings", nargs="+", default=["compas", "rare", "half", "edge", "gross"])
    ap.add_argument("--quick", action="store_true", help="3 seeds, n = 5000")
    ap.add_argument("--no-legacy", action="store_true", help="skip the baseline estimator")
    ap.add_argument(
        "--aim", action="store_true", help="the audit's search (aims at the held-out verdict)"
    )
    ap.add_argument("--out", default=None, help="results file (default: results/<stem>.json)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.n = 3, [5000]
    t_start = time.perf_counter()
    pmfs = {s: _pmf(s) for s in args.settings}
    rows, summary, folds10 = [], {}, []
    for n in args.n:
        for name, pmf in pmfs.items():
            legacy = not args.no_legacy
            part = [run_one(pmf, n, s, 5, legacy, args.aim) for s in range(args.seeds)]
            rows += part
            summary[f"{name}@{n}"] = summarise(part)
            if name == "compas":
                ten = [run_one(pmf, n, s, 10, False, args.aim) for s in range(args.seeds)]
                folds10 += ten
                same = np.mean(
                    [a["verdict"] == b["verdict"] for a, b in zip(part, ten, strict=True)]
                )
                summary[f"{name}@{n}"]["same_verdict_folds_5_10"] = float(same)
            print(f"{name} n={n}: {json.dumps(summary[f'{name}@{n}'])}", flush=True)
    wall = time.perf_counter() - t_start
    doc = {
        "command": " ".join(
            [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]
        ),
        "wall_s": wall,
        "tolerance": TOLERANCE,
        "max_true_lift": {k: _max_lift(p.p) for k, p in pmfs.items()},
        "summary": summary,
        "runs": rows,
        "runs_folds_10": folds10,
    }
    RESULTS.mkdir(exist_ok=True)
    stem = "heldout_calibration" + ("_aim" if args.aim else "") + ("_quick" if args.quick else "")
    out = Path(args.out) if args.out else RESULTS / f"{stem}.json"
    out.write_text(json.dumps(doc, indent=1, default=float))
    print(table(summary))
    print(f"\nwall time {wall:.0f} s; wrote {out}")
    return doc


if __name__ == "__main__":
    main()
