"""Tripathy, Wang, Ishwar Fig. 5 with the paper's own settings: per-sample penalty (eq. 8), lambda
10, delta in [0, 1], 250 epochs, batch 200, 5 adversary steps, Adam 1e-3, ReLU.

The code is privwatch.gallery.tripathy2019_gaussian_paper; its settings, the paper's numbers and
the noise between two runs are in src/privwatch/gallery/configs/tripathy2019_gaussian_paper.json
(shipped with the package). results.json and the figures in this folder are the committed record; a
run writes only to --out.

Run: python experiments/tripathy2019_gaussian_paper/run.py --out DIR [--quick]
(the same as: privwatch reproduce tripathy2019_gaussian_paper --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["tripathy2019_gaussian_paper", *sys.argv[1:]]))
