"""Sadeghi, Ding, Rakotoarivelo Fig. 1-2: which |S|, |X|, pmf generator and epsilon make the
paper's three claims true (sweep), and Fig. 1-2 at the best match.

The code is privwatch.gallery.sadeghi2020_settings; its settings, the paper's numbers and the noise
between two runs are in src/privwatch/gallery/configs/sadeghi2020_settings.json (shipped with the
package). results.json and the figures in this folder are the committed record; a run writes only
to --out.

Run: python experiments/sadeghi2020_settings/run.py --out DIR [--quick]
(the same as: privwatch reproduce sadeghi2020_settings --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["sadeghi2020_settings", *sys.argv[1:]]))
