"""Romanelli, Chatzikokolakis, Palamidessi Fig. 10-14 (Gowalla, L = 1,150 m and 518 m): the MI-
trained obfuscator against planar Laplace and the exact optimum.

The code is privwatch.gallery.romanelli2020_obfuscation_gowalla; its settings, the paper's numbers
and the noise between two runs are in
src/privwatch/gallery/configs/romanelli2020_obfuscation_gowalla.json (shipped with the package).
results.json and the figures in this folder are the committed record; a run writes only to --out.

Run: python experiments/romanelli2020_obfuscation_gowalla/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_obfuscation_gowalla --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["romanelli2020_obfuscation_gowalla", *sys.argv[1:]]))
