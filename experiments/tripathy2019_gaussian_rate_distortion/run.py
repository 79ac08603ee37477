"""Tripathy, Wang, Ishwar Fig. 4: rate-distortion of a 5-dim Gaussian source.

The code is privwatch.gallery.tripathy2019_gaussian_rate_distortion; its settings, the paper's
numbers and the noise between two runs are in
src/privwatch/gallery/configs/tripathy2019_gaussian_rate_distortion.json (shipped with the
package). results.json and the figures in this folder are the committed record; a run writes only
to --out.

Run: python experiments/tripathy2019_gaussian_rate_distortion/run.py --out DIR [--quick]
(the same as: privwatch reproduce tripathy2019_gaussian_rate_distortion --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["tripathy2019_gaussian_rate_distortion", *sys.argv[1:]]))
