"""Tripathy, Wang, Ishwar Fig. 6: 5-dim Gaussian pair, useful data, against Prop. 2.

The code is privwatch.gallery.tripathy2019_gaussian_vector; its settings, the paper's numbers and
the noise between two runs are in src/privwatch/gallery/configs/tripathy2019_gaussian_vector.json
(shipped with the package). results.json and the figures in this folder are the committed record; a
run writes only to --out.

Run: python experiments/tripathy2019_gaussian_vector/run.py --out DIR [--quick]
(the same as: privwatch reproduce tripathy2019_gaussian_vector --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["tripathy2019_gaussian_vector", *sys.argv[1:]]))
