"""Sadeghi, Ding, Rakotoarivelo Fig. 1-2: gamma bound, optimal level and NMIL over 5,000 random
pmfs.

The code is privwatch.gallery.sadeghi2020_watchdog_mc; its settings, the paper's numbers and the
noise between two runs are in src/privwatch/gallery/configs/sadeghi2020_watchdog_mc.json (shipped
with the package). results.json and the figures in this folder are the committed record; a run
writes only to --out.

Run: python experiments/sadeghi2020_watchdog_mc/run.py --out DIR [--quick]
(the same as: privwatch reproduce sadeghi2020_watchdog_mc --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["sadeghi2020_watchdog_mc", *sys.argv[1:]]))
