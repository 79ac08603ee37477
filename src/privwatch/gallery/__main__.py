"""``python -m privwatch.gallery``: the command line of :mod:`privwatch.gallery._command`."""

from ._command import main

raise SystemExit(main())
