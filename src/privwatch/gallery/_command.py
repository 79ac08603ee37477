"""``python -m privwatch.gallery``: the gallery's own command line (``privwatch reproduce`` is the
same run from the ``privwatch`` command)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from .. import gallery

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m privwatch.gallery NAME --out DIR [--quick] [--overwrite]``.

    Runs :func:`privwatch.gallery.reproduce` and prints the paper's values beside ours; with
    ``--list`` or no NAME, lists the experiments. Returns the exit status (argparse exits with
    status 2 and its usage on a bad command line).
    """
    parser = argparse.ArgumentParser(
        prog="python -m privwatch.gallery", description=gallery.__doc__
    )
    parser.add_argument("name", nargs="?", help="experiment name (see --list)")
    parser.add_argument("--out", type=Path, help="output folder (only this folder is written)")
    parser.add_argument("--quick", action="store_true", help="the config's short settings")
    parser.add_argument("--overwrite", action="store_true", help="replace out/results.json")
    parser.add_argument("--list", action="store_true", help="list the experiments")
    args = parser.parse_args(argv)
    if args.list or args.name is None:
        for n in gallery.available():
            print(f"{n}  {gallery.describe(n)}")
        return 0
    if args.out is None:
        parser.error("--out DIR is required")
    rep = gallery.reproduce(args.name, args.out, quick=args.quick, overwrite=args.overwrite)
    for row in rep.results["side_by_side"]:
        print(f"{row['item']}: paper {row['paper']}, ours {row['ours']}")
    print(f"results in {rep.out}: {', '.join(p.name for p in rep.files)}")
    return 0
