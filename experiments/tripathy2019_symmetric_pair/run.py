"""Tripathy, Wang, Ishwar Fig. 3: PPAN and the conventional approach on the symmetric pair (m = 10,
p = 0.4, 1,000 samples) against the optimum (eq. 30-31).

The code is privwatch.gallery.tripathy2019_symmetric_pair; its settings, the paper's numbers and
the noise between two runs are in src/privwatch/gallery/configs/tripathy2019_symmetric_pair.json
(shipped with the package). results.json and the figures in this folder are the committed record; a
run writes only to --out.

Run: python experiments/tripathy2019_symmetric_pair/run.py --out DIR [--quick]
(the same as: privwatch reproduce tripathy2019_symmetric_pair --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["tripathy2019_symmetric_pair", *sys.argv[1:]]))
