"""Romanelli, Chatzikokolakis, Palamidessi Table II under the paper's protocol, the paper's starting
mechanisms G0 and the paper's classifier schedule (synthetic data).

The code is privwatch.gallery.romanelli2020_schedule; its settings, the paper's
numbers and the noise between two runs are in
src/privwatch/gallery/configs/romanelli2020_table2.json (shipped with the package).
results.json and the figures in this folder are the committed record; a run writes only to --out.

Run: python experiments/romanelli2020_table2/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_table2 --out DIR [--quick])
"""

import sys

from privwatch.gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["romanelli2020_table2", *sys.argv[1:]]))
