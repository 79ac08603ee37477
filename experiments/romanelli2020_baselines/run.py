"""Romanelli, Chatzikokolakis, Palamidessi Fig. 2, 6, 7, 9, 11, 12, 14: planar Laplace and no-noise
Bayes errors, and the exact Bayes-optimal mechanism by LP.

The code is privwatch.gallery.romanelli2020_baselines; its settings, the paper's numbers and the
noise between two runs are in src/privwatch/gallery/configs/romanelli2020_baselines.json (shipped
with the package). results.json and the figures in this folder are the committed record; a run
writes only to --out.

Run: python experiments/romanelli2020_baselines/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_baselines --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["romanelli2020_baselines", *sys.argv[1:]]))
