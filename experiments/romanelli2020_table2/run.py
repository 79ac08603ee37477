"""Romanelli, Chatzikokolakis, Palamidessi Table II under the paper's protocol, the paper's starting
mechanisms G0, the paper's classifier schedule and the generators of ours (synthetic data).

The code is privwatch.gallery.romanelli2020_schedule; its settings, the paper's
numbers and the noise between two runs are in
src/privwatch/gallery/configs/romanelli2020_table2.json (shipped with the package).
results.json and the figures in this folder are the committed record; a run writes only to --out.

Run everything: python experiments/romanelli2020_table2/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_table2 --out DIR [--quick])

Run some sweeps only and merge them into an earlier record (the way the record grew: the
sweeps ``schedule`` with 20 / 40 epochs and ``seeds`` in one run, then ``ours``, then the
paper's 3,000 classifier epochs, then ``seeds`` again with its two L = 270 m cases of the
paper's generator schedule added, ``--sweep seeds --n-jobs 2``, which repeated its other fits
exactly):

    python experiments/romanelli2020_table2/run.py --out DIR --sweep ours \
        --merge-into experiments/romanelli2020_table2
    python experiments/romanelli2020_table2/run.py --out DIR --sweep schedule \
        --classifier-epochs 3000 --merge-into experiments/romanelli2020_table2

The run of the sweeps goes to DIR/part/ (its own results.json); DIR/results.json is then the
earlier record with the new fits added (``results/runs`` lists every run and its fits), its
``side_by_side`` recomputed from the config, and DIR/schedule_trend.png redrawn.
``--from-part PART --merge-into RECORD --out DIR`` merges an earlier run of some sweeps (the
folder PART with its results.json) without running anything.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from privwatch import gallery
from privwatch.gallery.romanelli2020_schedule import draw, merge

NAME = "romanelli2020_table2"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sweep", action="append", help="run only this sweep (repeatable)")
    parser.add_argument("--classifier-epochs", type=int, action="append")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--merge-into", type=Path, help="folder of the record to extend")
    parser.add_argument("--from-part", type=Path, help="merge this earlier run instead of running")
    args, rest = parser.parse_known_args(argv)
    if args.from_part and not args.merge_into:
        parser.error("--from-part needs --merge-into")
    if not (args.sweep or args.classifier_epochs or args.merge_into):
        return gallery.main([NAME, "--out", str(args.out), *(["--quick"] * args.quick), *rest])
    over: dict[str, Any] = {"n_jobs": args.n_jobs}
    if args.sweep:
        over["sweeps"] = args.sweep
    if args.classifier_epochs:
        over["schedule"] = {"classifier_epochs": args.classifier_epochs}
    part_dir = args.from_part or (args.out / "part" if args.merge_into else args.out)
    if not args.from_part:
        gallery.reproduce(NAME, part_dir, quick=args.quick, overrides=over)
    if not args.merge_into:
        return 0
    part = json.loads((part_dir / "results.json").read_text())
    record = json.loads((args.merge_into / "results.json").read_text())
    cfg = gallery.config(NAME)
    results = merge(record["results"], part["results"])
    merged = {
        **record,
        "settings": cfg["settings"],
        "side_by_side": gallery.side_by_side(cfg, results),
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    if (args.out / "results.json").exists():
        parser.error(f"--out {args.out} already holds a results.json; choose an empty folder")
    (args.out / "results.json").write_text(json.dumps(merged, indent=2) + "\n")
    settings = cfg["settings"]
    draw(results, max(settings["grid_cells"]), max(settings["hits"]), args.out)
    for row in merged["side_by_side"]:
        print(f"{row['item']}: paper {row['paper']}, ours {row['ours']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
