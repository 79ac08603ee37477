"""``python -m privwatch.gallery``: the command line of :mod:`privwatch.cli._gallery`."""

from ..cli._gallery import main

raise SystemExit(main())
