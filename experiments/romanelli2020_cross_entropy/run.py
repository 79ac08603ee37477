"""Romanelli, Chatzikokolakis, Palamidessi Fig. 4: a generator trained on the cross entropy keeps
swapping users (synthetic, L = 270 m).

The code is privwatch.gallery.romanelli2020_cross_entropy; its settings, the paper's numbers and
the noise between two runs are in src/privwatch/gallery/configs/romanelli2020_cross_entropy.json
(shipped with the package). results.json and the figures in this folder are the committed record; a
run writes only to --out.

Run: python experiments/romanelli2020_cross_entropy/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_cross_entropy --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["romanelli2020_cross_entropy", *sys.argv[1:]]))
