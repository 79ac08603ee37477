"""Tripathy, Wang, Ishwar Fig. 5: scalar Gaussian pair (rho 0.85), useful and full data, against
Props. 1 and 3.

The code is privwatch.gallery.tripathy2019_gaussian_scalar; its settings, the paper's numbers and
the noise between two runs are in src/privwatch/gallery/configs/tripathy2019_gaussian_scalar.json
(shipped with the package). results.json and the figures in this folder are the committed record; a
run writes only to --out.

Run: python experiments/tripathy2019_gaussian_scalar/run.py --out DIR [--quick]
(the same as: privwatch reproduce tripathy2019_gaussian_scalar --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["tripathy2019_gaussian_scalar", *sys.argv[1:]]))
