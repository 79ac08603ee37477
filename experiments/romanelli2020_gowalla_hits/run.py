"""Romanelli, Chatzikokolakis, Palamidessi Fig. 2, 12 and 14 (Gowalla, L = 1,150 m and 518 m) at
the paper's 100, 200 and 500 hits: the generator of ours trained against the exact Bayes attacker,
planar Laplace and the exact optimum.

The code is privwatch.gallery.romanelli2020_obfuscation (part "gowalla", only the "bayes"
generator); its settings, the paper's numbers and the noise between two runs are in
src/privwatch/gallery/configs/romanelli2020_gowalla_hits.json (shipped with the package).
results.json and the figures in this folder are the committed record; a run writes only to --out.

Run: python experiments/romanelli2020_gowalla_hits/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_gowalla_hits --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["romanelli2020_gowalla_hits", *sys.argv[1:]]))
