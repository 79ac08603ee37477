"""Romanelli, Chatzikokolakis, Palamidessi Fig. 5-9 (synthetic, L = 270 m and 173 m): the MI-
trained obfuscator against planar Laplace and the exact optimum.

The code is privwatch.gallery.romanelli2020_obfuscation_synthetic; its settings, the paper's
numbers and the noise between two runs are in
src/privwatch/gallery/configs/romanelli2020_obfuscation_synthetic.json (shipped with the package).
results.json and the figures in this folder are the committed record; a run writes only to --out.

Run: python experiments/romanelli2020_obfuscation_synthetic/run.py --out DIR [--quick]
(the same as: privwatch reproduce romanelli2020_obfuscation_synthetic --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["romanelli2020_obfuscation_synthetic", *sys.argv[1:]]))
