"""Information kept by the audit's release against the oracle (issue #42 item 6).

Run: ``nice -n 10 python benchmarks/bench_oracle.py [--seeds 3] [--n 2000 40000]
[--settings adult07 adult1 compas rare half edge gross planted] [--quick]``; writes
``benchmarks/results/oracle.json`` and prints the Markdown table of BENCHMARKS.md.

Each setting is a known joint pmf p(s, x) (``Pmf`` of ``bench_heldout_calibration.py``). Per
seed, n records are drawn from it and searched two ways, both exactly as ``privwatch audit``
calls :func:`privwatch.release.find_release` (5 held-out folds, its ladder of candidate
epsilons, no frontier points, no alternatives):

- **aimed** (the audit's release): the search aims at the held-out verdict, the credible margin
  grown until the check passes (``aim=True``, ``release/search/_margin.py``);
- **first** (the margin's price): the same search without held-out folds (``folds=0``): the
  in-sample release, every cell exact on the sample, that the aim starts from.

For each, the information kept is H(Y) under the known pmf: every tuple of the pmf's support is
mapped to its released labels (``ReleaseResult.mapping``; a tuple the sample never saw to ``*``
in every column, as the saved mechanism's ``apply`` maps it) and the entropy of the released
cells' true masses is taken (``*`` one symbol, as ``information_nats`` counts it). The true
breach share is the mass of the released cells whose true p(s | y) breaks epsilon
(|log p(s|y)/p(s)| > epsilon, or log p(s|y)/p(s) > epsilon one-sided).

**The oracle** is the same search run on the population pmf itself: a count table with one row
per (observed tuple, sensitive value) of the support, its count p(s, x) x N (N = 10^9, so that
the minimum class size of one record binds nowhere; the search's counts are floats throughout,
``CountTable.from_frame(weights=...)``), searched with ``counts_column`` and ``folds=0``. No
held-out check: the truth is known, so every cell the search releases meets epsilon exactly
under the pmf (true breach 0, checked). It is the best release the search can find when the
truth is known. Ratio = kept / oracle, per seed (mean and range).

Settings: ``adult07`` and ``adult1``, an Adult-like pmf (:func:`adult_pmf`: race sensitive with
the UCI Adult shares, two values under 1.5 %; age band, sex, education, marital status and
region observed; 16,128 observed tuples) at epsilon 0.7 one-sided (``disclosure="positive"``)
and epsilon 1 two-sided; the calibration settings of ``bench_heldout_calibration.py``
(``compas`` 0.92, ``rare`` 1, ``half`` 1, ``edge`` 0.5, ``gross`` 0.4, ``planted`` 1, all
two-sided) at their epsilons.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_heldout_calibration import Pmf, _pmf

from privwatch.release import ReleaseNotMetWarning, ReleaseResult, find_release
from privwatch.release.heldout import TOLERANCE
from privwatch.release.search import MARGINS

RESULTS = Path(__file__).parent / "results"
#: Records the oracle's count table stands for (counts p(s, x) x N).
ORACLE_N = 1e9

#: UCI Adult's race shares (adult.data, 32,561 records): two values under 1.5 %.
ADULT_RACE = {
    "White": 0.854,
    "Black": 0.096,
    "Asian-Pac-Islander": 0.031,
    "Amer-Indian-Eskimo": 0.0096,
    "Other": 0.0083,
}
#: Observed columns of the Adult-like pmf and their numbers of values (16,128 tuples).
ADULT_COLUMNS = {"age": 9, "sex": 2, "education": 16, "marital": 7, "region": 8}


def adult_pmf(epsilon: float, disclosure: str) -> tuple[Pmf, str]:
    """An Adult-like pmf: p(x) product-like (Dirichlet margins, log-normal noise per tuple for
    dependence), p(s | x) proportional to prior(s) exp(u_s(x)) with u_s(x) the sum of a region
    effect (sd 0.9, as native country drives race in Adult), an education and a marital effect
    (sd 0.3 each) and per-tuple noise (sd 0.3); the prior is rescaled until p(s) is the Adult
    race shares."""
    rng = np.random.default_rng(42)
    sizes = list(ADULT_COLUMNS.values())
    grid = np.stack(np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij"), -1)
    grid = grid.reshape(-1, len(sizes))
    margins = [rng.dirichlet(np.full(k, 2.0)) for k in sizes]
    px = np.prod([m[grid[:, j]] for j, m in enumerate(margins)], axis=0)
    px *= rng.lognormal(0, 0.5, len(px))
    px /= px.sum()
    target = np.array(list(ADULT_RACE.values()))
    target /= target.sum()
    u = np.zeros((len(px), len(target)))
    for j, sd in ((4, 0.9), (2, 0.3), (3, 0.3)):  # region, education, marital
        effect = rng.normal(0, sd, (sizes[j], len(target)))
        u += effect[grid[:, j]]
    u += rng.normal(0, 0.3, u.shape)
    u[:, 0] = 0.0  # White is the reference
    prior = target.copy()
    for _ in range(200):  # rescale the prior until the margin of s is the target
        post = prior * np.exp(u)
        post /= post.sum(1, keepdims=True)
        prior *= target / (px @ post)
    p = (post * px[:, None]).T
    names = list(ADULT_COLUMNS)
    tuples = np.array([[f"{names[j]}{v}" for j, v in enumerate(r)] for r in grid], dtype=object)
    name = f"adult{epsilon:g}".replace(".", "")
    return Pmf(name, names, tuples, p, list(ADULT_RACE), epsilon), disclosure


def setting(name: str) -> tuple[Pmf, str]:
    """The pmf of ``name`` and its disclosure."""
    if name == "adult07":
        return adult_pmf(0.7, "positive")
    if name == "adult1":
        return replace(adult_pmf(1.0, "both")[0], name="adult1"), "both"
    return _pmf(name), "both"


def cells_of(pmf: Pmf, mapping: pd.DataFrame) -> np.ndarray:
    """The released cell of every tuple of the pmf's support (unseen tuples: ``*``)."""
    key = pd.MultiIndex.from_frame(mapping[pmf.columns].astype(str))
    pos = key.get_indexer(pd.MultiIndex.from_arrays(pmf.tuples.T.astype(str)))
    labels = [
        np.where(pos >= 0, mapping[f"release_{c}"].to_numpy(dtype=object)[pos], "*")
        for c in pmf.columns
    ]
    return np.asarray(pd.factorize(pd.MultiIndex.from_arrays(labels))[0], dtype=np.int64)


def truth(pmf: Pmf, disclosure: str, mapping: pd.DataFrame) -> tuple[float, float]:
    """(H(Y) in nats, true breach share) of a release under the known pmf."""
    cell = cells_of(pmf, mapping)
    joint = np.zeros((int(cell.max()) + 1, pmf.p.shape[0]))
    np.add.at(joint, cell, pmf.p.T)
    mass = joint.sum(1)
    nz = mass > 0
    info = float(-(mass[nz] * np.log(mass[nz])).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = np.log(joint[nz] / mass[nz, None]) - np.log(pmf.p.sum(1))
    worst = lift.max(1) if disclosure == "positive" else np.abs(lift).max(1)
    return info, float(mass[nz][worst > pmf.epsilon + 1e-9].sum())


def population_table(pmf: Pmf, n: float = ORACLE_N) -> pd.DataFrame:
    """The pmf as a count table: one row per (observed tuple, sensitive value) of the support,
    its count p(s, x) x ``n`` (fractional)."""
    s_idx, x_idx = np.nonzero(pmf.p > 0)
    frame = pd.DataFrame(pmf.tuples[x_idx], columns=pmf.columns)
    frame["s"] = np.asarray(pmf.values, dtype=object)[s_idx]
    frame["n"] = pmf.p[s_idx, x_idx] * n
    return frame


def search(frame: pd.DataFrame, pmf: Pmf, disclosure: str, **kw: object) -> ReleaseResult:
    """:func:`find_release` as the audit calls it (ladder of candidates, no frontier points,
    no alternatives)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        return find_release(
            frame, "s", pmf.columns, epsilon=pmf.epsilon, disclosure=disclosure,
            frontier_epsilons=[], suggest=False, **kw,  # type: ignore[arg-type]
        )  # fmt: skip


def oracle(pmf: Pmf, disclosure: str, n: float = ORACLE_N) -> dict[str, float]:
    """The oracle: the search on the pmf itself (weights, not a sample; no held-out check)."""
    t0 = time.process_time()
    res = search(population_table(pmf, n), pmf, disclosure, folds=0, counts_column="n")
    info, breach = truth(pmf, disclosure, res.mapping)
    return {
        "information_nats": info,
        "search_information_nats": float(res.information_nats),
        "truth": breach,
        "met": bool(res.satisfied),
        "cpu_s": time.process_time() - t0,
    }


def run_one(
    pmf: Pmf, disclosure: str, n: int, seed: int, extra: tuple[float, ...] = ()
) -> dict[str, object]:
    """One seed: the aimed release, and the in-sample releases at each credible margin the aim
    may try (``first``: none), each under the pmf; ``extra``: margins the aim does not try,
    each searched and held-out checked as the aim would (``checked<level>``: ``aim=False``,
    5 folds, that confidence)."""
    df = pmf.sample(n, np.random.default_rng(10_000 + seed))
    row: dict[str, object] = {"setting": pmf.name, "n": n, "seed": seed}
    tries: list[tuple[str, dict[str, object]]] = [("aimed", {"rng": seed})]
    tries += [
        ("first" if level is None else f"margin{level:g}", {"folds": 0, "confidence": level})
        for level in (None, *MARGINS)
    ]
    tries += [
        (f"checked{level:g}", {"rng": seed, "aim": False, "confidence": level}) for level in extra
    ]
    for label, kw in tries:
        t0 = time.process_time()
        res = search(df, pmf, disclosure, **kw)
        info, breach = truth(pmf, disclosure, res.mapping)
        row[label] = {
            "information_nats": info,
            "in_sample_nats": float(res.information_nats),
            "truth": breach,
            "met": bool(res.satisfied),
            "verdict": res.held_out_verdict,
            "confidence": res.confidence,
            "cpu_s": time.process_time() - t0,
        }
    # the best of those in-sample releases whose TRUE breach is within the tolerance: what the
    # aim could publish if it knew the truth (a margin chosen by the truth, not by the check)
    within = [
        row[label]["information_nats"]  # type: ignore[index]
        for label, _ in tries[1:]
        if not label.startswith("checked") and row[label]["truth"] <= TOLERANCE  # type: ignore[index]
    ]
    row["best_true_margin_nats"] = max(within, default=0.0)
    return row


def summarise(rows: list[dict[str, object]], best: float) -> dict[str, object]:
    """Mean and range of the aimed and first releases' information and their ratios to the
    oracle's ``best``; the first release's true breaches."""

    def of(label: str, key: str) -> np.ndarray:
        return np.array([r[label][key] for r in rows], dtype=float)  # type: ignore[index]

    aimed, first = of("aimed", "information_nats"), of("first", "information_nats")
    met = np.array([r["aimed"]["met"] for r in rows], dtype=bool)  # type: ignore[index]
    kept = np.where(met, aimed, 0.0)  # a release that is not met publishes nothing
    return {
        "seeds": len(rows),
        "met": float(met.mean()),
        "aimed": [float(aimed.mean()), float(aimed.min()), float(aimed.max())],
        "ratio": [float(kept.mean() / best), float(kept.min() / best), float(kept.max() / best)],
        "aimed_truth_max": float(of("aimed", "truth").max()),
        "aimed_confidence": [r["aimed"]["confidence"] for r in rows],  # type: ignore[index]
        "first": [float(first.mean()), float(first.min()), float(first.max())],
        "first_ratio": float(first.mean() / best),
        "best_true_margin_ratio": float(
            np.mean([r["best_true_margin_nats"] for r in rows]) / best  # type: ignore[call-overload]
        ),
        "price_nats": float((first - aimed).mean()),
        "first_truth": float(of("first", "truth").mean()),
        "first_truth_max": float(of("first", "truth").max()),
        "first_breach": float((of("first", "truth") > TOLERANCE).mean()),
        "cpu_s": float(of("aimed", "cpu_s").mean()),
    } | {
        label: {  # a margin the aim does not try: information, truth, how often it is MET
            "ratio": float(of(label, "information_nats").mean() / best),
            "truth": float(of(label, "truth").mean()),
            "met": float(np.mean([r[label]["met"] for r in rows])),  # type: ignore[index]
        }
        for label in rows[0]
        if label.startswith("checked")
    }


def table(summary: dict[str, dict[str, object]], oracles: dict[str, dict[str, float]]) -> str:
    lines = [
        "| setting | n | seeds | oracle nats (true breach) | MET | aimed nats, mean (range) "
        "| ratio to oracle, mean (range) | first release nats | price of the margin "
        "| first release: mean true breach; share > 5 % | best margin by the truth |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, s in summary.items():
        name, n = key.rsplit("@", 1)
        o = oracles[name]
        a, r, f = s["aimed"], s["ratio"], s["first"]
        lines.append(
            f"| {name} | {int(n):,} | {s['seeds']} | {o['information_nats']:.2f} "
            f"({o['truth']:.1%}) | {s['met']:.0%} | {a[0]:.2f} ({a[1]:.2f}-{a[2]:.2f}) | "  # type: ignore[index]
            f"**{r[0]:.2f}x** ({r[1]:.2f}-{r[2]:.2f}) | {f[0]:.2f} ({s['first_ratio']:.2f}x) | "  # type: ignore[index]
            f"{s['price_nats']:.2f} nats | {s['first_truth']:.1%}; {s['first_breach']:.0%} | "
            f"{s['best_true_margin_ratio']:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 40000])
    ap.add_argument(
        "--settings",
        nargs="+",
        default=["adult07", "adult1", "compas", "rare", "half", "edge", "gross", "planted"],
    )
    ap.add_argument("--quick", action="store_true", help="1 seed, n = 2000, adult07 only")
    ap.add_argument(
        "--extra-margins", type=float, nargs="*", default=[], help="margins the aim does not try"
    )
    ap.add_argument("--out", default=str(RESULTS / "oracle.json"))
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.n, args.settings = 1, [2000], ["adult07"]
    t_start = time.perf_counter()
    rows, summary, oracles = [], {}, {}
    for name in args.settings:
        pmf, disclosure = setting(name)
        oracles[name] = oracle(pmf, disclosure) | {"epsilon": pmf.epsilon}
        oracles[name]["disclosure"] = disclosure  # type: ignore[assignment]
        oracles[name]["tuples"] = len(pmf.tuples)
        print(f"{name} oracle: {json.dumps(oracles[name])}", flush=True)
        for n in args.n:
            part = [
                run_one(pmf, disclosure, n, s, tuple(args.extra_margins)) for s in range(args.seeds)
            ]
            rows += part
            summary[f"{name}@{n}"] = summarise(part, oracles[name]["information_nats"])
            print(f"{name} n={n}: {json.dumps(summary[f'{name}@{n}'])}", flush=True)
    wall = time.perf_counter() - t_start
    doc = {
        "command": " ".join(["bench_oracle.py", *(argv if argv is not None else sys.argv[1:])]),
        "wall_s": wall,
        "tolerance": TOLERANCE,
        "oracle_n": ORACLE_N,
        "oracles": oracles,
        "summary": summary,
        "runs": rows,
    }
    out = Path(args.out)
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, default=float))
    print(table(summary, oracles))
    print(f"\nwall time {wall:.0f} s; wrote {out}")
    return doc


if __name__ == "__main__":
    main()
