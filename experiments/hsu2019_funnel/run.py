"""Hsu, Asoodeh, Calmon eq. (10) privacy-funnel bound, Prop. 1-2 on the release, and Remark 1 (R_Y
on all of X) on binned COMPAS.

The code is privwatch.gallery.hsu2019_funnel; its settings, the paper's numbers and the noise
between two runs are in src/privwatch/gallery/configs/hsu2019_funnel.json (shipped with the
package). results.json and the figures in this folder are the committed record; a run writes only
to --out.

Run: python experiments/hsu2019_funnel/run.py --out DIR [--quick]
(the same as: privwatch reproduce hsu2019_funnel --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["hsu2019_funnel", *sys.argv[1:]]))
