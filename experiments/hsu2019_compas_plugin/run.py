"""Hsu, Asoodeh, Calmon Fig. 1-2 on COMPAS with the plug-in (binned) lift: utility vs gamma over
epsilon.

The code is privwatch.gallery.hsu2019_compas_plugin; its settings, the paper's numbers and the
noise between two runs are in src/privwatch/gallery/configs/hsu2019_compas_plugin.json (shipped
with the package). results.json and the figures in this folder are the committed record; a run
writes only to --out.

Run: python experiments/hsu2019_compas_plugin/run.py --out DIR [--quick]
(the same as: privwatch reproduce hsu2019_compas_plugin --out DIR [--quick])
"""

import sys

from privwatch.cli._gallery import main

if __name__ == "__main__":
    raise SystemExit(main(["hsu2019_compas_plugin", *sys.argv[1:]]))
