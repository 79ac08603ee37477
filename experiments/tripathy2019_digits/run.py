"""Tripathy, Wang, Ishwar Fig. 8-9 on digit images: hide the digit, keep the pixels; the PPAN
adversary next to a fresh attacker.

The code is privwatch.gallery.tripathy2019_digits; its settings, the paper's numbers and the noise
between two runs are in src/privwatch/gallery/configs/tripathy2019_digits.json (shipped with the
package). results.json and the figures in this folder are the committed record; a run writes only
to --out.

Run: python experiments/tripathy2019_digits/run.py --out DIR [--quick]
(the same as: privwatch reproduce tripathy2019_digits --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["tripathy2019_digits", *sys.argv[1:]]))
