"""The fixed part of an engine-route audit: everything after the count (issue #42 items 2, 3).

The engine route counts the records in the engine, then decides on the folded count table
(``engines.count_table``: ``x1..x6, s, fold, count``). At 10^7 and 10^8 rows of
``bench_engines.py``'s data (sensitive with 4 values; six observed columns of 4·5·5·8·10·12 =
96,000 tuples; 5 folds) that table has the same shape, 96,000 x 4 x 5 = 1.92 M rows (384,000
(tuple, sensitive) rows, a count per fold), whatever the number of records: the decision on it
is the audit's fixed part. This script times that part alone, without the records:

- ``--source synth`` (default): the table synthesised from its distribution. The data's columns
  are ``hash(i * 7 + k) % c`` and ``(hash(i) + i % 3) % 4`` (uniform and independent), and the
  fold of a row a hash of its position, so a cell's count is multinomial: ``rows`` records over
  the 1.92 M (tuple, sensitive, fold) cells with equal probabilities.
- ``--source duckdb``: the real table, ``bench_engines.generate`` then ``engines.count_table``
  (DuckDB); practical up to 10^7 rows here.

Timed, one after another on the same table (``EngineRoute.decide``, the route's own code):
``tradeoff`` (the joint, ``propose_epsilon``: 40 thresholds), the release search (global and
local recoding, held-out check, margins, the frontier, the alternatives when NOT MET) through
the method ``search``, and the ``leakage`` section. A cProfile of the decide step is printed
with ``--profile N`` (the top N by cumulative and by own time).

Run: ``python benchmarks/bench_fixed_part.py [--rows 100000000] [--epsilon 0.5]
[--source synth|duckdb] [--profile 30] [--repeat 1]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privwatch.audit import AuditSpec
from privwatch.audit._route_engine import EngineRoute, _Counted

CARD = (4, 5, 5, 8, 10, 12)
OBS = [f"x{i}" for i in range(1, 7)]
FOLDS = 5


def synth_table(rows: int, seed: int = 0) -> pd.DataFrame:
    """``count_table``'s folded table of ``rows`` uniform, independent records (see above):
    one multinomial draw over every (tuple, sensitive, fold) cell, empty cells left out, key
    values as Python ints in object columns, sorted by the keys."""
    g = np.random.default_rng(seed)
    tuples = int(np.prod(CARD))
    cells = tuples * 4 * FOLDS
    n = g.multinomial(rows, np.full(cells, 1.0 / cells))
    idx = np.flatnonzero(n)
    codes = np.unravel_index(idx, (*CARD, 4, FOLDS))
    frame = {
        name: pd.Series(c.astype(np.int64)).astype(object)
        for name, c in zip(OBS, codes[:6], strict=True)
    }
    frame["s"] = pd.Series(codes[6].astype(np.int64)).astype(object)
    frame["fold"] = codes[7].astype(np.int64)
    frame["count"] = n[idx].astype(np.int64)
    out = pd.DataFrame(frame)
    out.attrs.update(engine="synthetic", reason="bench", missing={k: 0 for k in [*OBS, "s"]})
    return out


def duckdb_table(rows: int, work: Path) -> pd.DataFrame:
    from bench_engines import generate  # type: ignore[import-not-found]

    from privwatch.engines import count_table

    work.mkdir(parents=True, exist_ok=True)
    path = work / f"data_{rows}.parquet"
    generate(path, rows)
    return count_table(str(path), ["s"], OBS, engine="duckdb", folds=FOLDS, seed=0)


def decide_once(counts: pd.DataFrame, epsilon: float, profile: int) -> dict[str, Any]:
    spec = AuditSpec(sensitive=["s"], observed=OBS, epsilon=epsilon, folds=FOLDS, records=False)
    route = EngineRoute("duckdb", "bench")
    holes = counts.iloc[:0][[*OBS, "s"]]  # no missing key in this table
    counted = _Counted(counts, "duckdb", "bench", ["s"], list(OBS), spec, {}, holes)
    marks: list[tuple[str, float]] = []
    prof = cProfile.Profile(time.process_time) if profile else None  # CPU time: a busy machine
    t0 = time.perf_counter()
    c0 = time.process_time()
    if prof is not None:
        prof.enable()
    decided = route.decide(spec, counted, lambda m: marks.append((m, time.perf_counter())))
    if prof is not None:
        prof.disable()
    total = time.perf_counter() - t0
    cpu = time.process_time() - c0
    ends = [t for _, t in marks[1:]] + [t0 + total]
    steps = {m: round(e - s, 3) for (m, s), e in zip(marks, ends, strict=True)}
    steps["before the first step"] = round(marks[0][1] - t0, 3) if marks else 0.0
    leak = decided.leakage
    found = decided.decision.found
    out = {
        "epsilon": epsilon, "wall_s": round(total, 3), "cpu_s": round(cpu, 3), "steps": steps,
        "status": leak.get("status"), "information_nats": None if found is None
        else round(float(found.information_nats), 6),
        "held_out": leak.get("held_out"),
        "frontier": leak.get("frontier"),
        "n_alternatives": len(leak.get("alternatives") or []),
    }  # fmt: skip
    if prof is not None:
        for key in ("cumulative", "tottime"):
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats(key).print_stats(profile)
            print(f"--- profile, by {key} ---")
            print("\n".join(buf.getvalue().splitlines()[: profile + 12]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--epsilon", type=float, nargs="+", default=[0.5])
    ap.add_argument("--source", choices=("synth", "duckdb"), default="synth")
    ap.add_argument("--dir", default="/tmp/pw42")
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.source == "synth":
        counts = synth_table(args.rows)
    else:
        counts = duckdb_table(args.rows, Path(args.dir))
    built = time.perf_counter() - t0
    per = counts.groupby([*OBS, "s"]).size()
    print(
        f"table: {len(counts)} rows ({len(per)} (tuple, sensitive) rows), "
        f"{int(counts['count'].sum())} records, built in {built:.1f} s; load {os.getloadavg()}"
    )
    runs = []
    for _ in range(args.repeat):
        for eps in args.epsilon:
            r = decide_once(counts, eps, args.profile)
            r["load"] = os.getloadavg()
            print(json.dumps({k: v for k, v in r.items() if k not in ("frontier", "held_out")}))
            runs.append(r)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(
            json.dumps(
                {"rows": args.rows, "source": args.source, "runs": runs}, indent=1, default=str
            )
        )


if __name__ == "__main__":
    main()
