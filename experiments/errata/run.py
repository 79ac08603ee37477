"""Errata: the papers' own mistakes, each computed (docs/errata.md).

The code is privwatch.gallery.errata; its settings, the paper's numbers and the noise between two
runs are in src/privwatch/gallery/configs/errata.json (shipped with the package). results.json and
the figures in this folder are the committed record; a run writes only to --out.

Run: python experiments/errata/run.py --out DIR [--quick]
(the same as: privwatch reproduce errata --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["errata", *sys.argv[1:]]))
