"""Romanelli, Chatzikokolakis, Palamidessi Fig. 2, 7, 9, 12, 14 at the paper's 10 / 100 / 200 / 500
hits: planar Laplace and no-noise Bayes errors (no LP).

The code is privwatch.gallery.romanelli2020_hits; its settings, the paper's numbers and the noise
between two runs are in src/privwatch/gallery/configs/romanelli2020_hits.json (shipped with the
package). results.json and the figures in this folder are the committed record; a run writes only
to --out.

Run: python experiments/romanelli2020_hits/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_hits --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["romanelli2020_hits", *sys.argv[1:]]))
