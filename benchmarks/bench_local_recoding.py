"""Local recoding alone, replayed: the refinements one NOT MET decide asks for (issue #42).

Runs ``bench_fixed_part.py``'s decide on its synthesised folded table (``--rows``,
``--epsilon``) with :func:`refine_locally` recorded (its space, start, counts, lift test and
minimum class size), then replays every recorded refinement with this checkout's
``_local_recoding`` and, with ``--base FILE``, with another version of that module (e.g. one
taken by ``git show BASE:src/privwatch/release/search/_local_recoding.py``): CPU time of each,
and whether each gives the recorded plan bit for bit (levels, suppressed rows, dtype). The
replay also refines each start under fractional counts (``counts * 0.37``) and a minimum class
size of 5, so the non-integer and minimum-size paths are compared too.

Run: ``python benchmarks/bench_local_recoding.py [--rows 10000000] [--epsilon 0.003]
[--base /tmp/old_local_recoding.py]``.
"""

from __future__ import annotations

import argparse
import os
import time
import types
from typing import Any

import numpy as np
from bench_fixed_part import decide_once, synth_table  # type: ignore[import-not-found]

from privwatch.release.search import _local_recoding, _one_search


def _same(a: Any, b: Any) -> bool:
    return bool(
        np.array_equal(a.levels, b.levels)
        and np.array_equal(a.suppressed, b.suppressed)
        and a.levels.dtype == b.levels.dtype
        and a.kind == b.kind
    )


def _module(path: str) -> types.ModuleType:
    """Another version of ``_local_recoding`` (its relative imports resolve to this checkout)."""
    mod = types.ModuleType("privwatch.release.search._local_recoding_other")
    mod.__package__ = "privwatch.release.search"
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), mod.__dict__)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--epsilon", type=float, default=0.003)
    ap.add_argument("--base", default=None)
    args = ap.parse_args()
    calls: list[tuple[Any, ...]] = []
    original = _one_search.refine_locally

    def record(space: Any, start: Any, counts: Any, box: Any, min_class_size: int = 1) -> Any:
        out = original(space, start, counts, box, min_class_size)
        calls.append((space, start, counts.copy(), box, min_class_size, out))
        return out

    _one_search.refine_locally = record  # type: ignore[assignment]
    run = decide_once(synth_table(args.rows), args.epsilon, 0)
    _one_search.refine_locally = original
    print(f"decide: {run['cpu_s']} s CPU, {run['status']}, {len(calls)} refinements")
    versions = {"this": _local_recoding}
    if args.base:
        versions["base"] = _module(args.base)
    for variant in ("recorded", "fractional, min_class_size 5"):
        plans: dict[str, list[Any]] = {}
        for name, mod in versions.items():
            c0 = time.process_time()
            plans[name] = [
                mod.refine_locally(space, start, counts, box, mcs)
                if variant == "recorded"
                else mod.refine_locally(space, start, counts * 0.37, box, 5)
                for space, start, counts, box, mcs, _ in calls
            ]
            cpu = time.process_time() - c0
            same = "-"
            if variant == "recorded":
                same = str(all(_same(p, c[-1]) for p, c in zip(plans[name], calls, strict=True)))
            print(f"{variant}: {name} {cpu:.3f} s CPU, plans as recorded: {same}; "
                  f"load {os.getloadavg()}")  # fmt: skip
        if "base" in plans:
            agree = all(_same(a, b) for a, b in zip(plans["this"], plans["base"], strict=True))
            print(f"{variant}: this and base give the same plans: {agree}")


if __name__ == "__main__":
    main()
