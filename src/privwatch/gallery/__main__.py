"""``python -m privwatch.gallery NAME --out DIR [--quick]``."""

from . import main

raise SystemExit(main())
