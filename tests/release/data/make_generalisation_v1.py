"""Write ``generalisation_v1.json`` and ``generalisation_v1_batch.csv`` with the code of commit
e9105e3 (before ``release.Generalisation`` existed), the fixtures of
``tests/release/test_generalisation.py``: a file saved by ``report.save_mechanism`` and a batch
released by ``report.apply_mechanism(report.load_mechanism(...), batch)``.

Run from a checkout of that commit (``git archive e9105e3 src | tar -x -C OLD``)::

    PYTHONPATH=OLD/src python tests/release/data/make_generalisation_v1.py tests/release/data

The old API (``privwatch.report.audit``, ``save_mechanism``, ``apply_mechanism``,
``load_mechanism``) is imported inside :func:`main` only: pytest imports every module under
``tests/`` to collect its doctests (``--doctest-modules``), and today's privwatch no longer has
those names, so an import at the top failed the collection of the whole suite.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd


def fit_table() -> pd.DataFrame:
    g = np.random.default_rng(7)
    n = 300
    s = g.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.where(s == 1, "yes", "no"),
            "a": np.where(g.random(n) < 0.3 + 0.4 * s, "high", "low"),
            "b": g.choice(["p", "q", "r"], n),
            "age": g.integers(18, 80, n),
        }
    )


def batch_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": ["high", "low", "low", "medium", None, "high"],
            "b": ["p", "q", "r", "p", "q", "r"],
            "age": [20.0, 45.0, 79.0, 30.0, 50.0, np.nan],
        }
    )


def main(out: Path) -> None:
    from privwatch.report import (  # type: ignore[attr-defined]  # the API of e9105e3
        apply_mechanism,
        audit,
        load_mechanism,
        save_mechanism,
    )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = audit(
            fit_table(), "s", ["a", "b", "age"], epsilon=0.4, bins={"age": 3}, folds=0,
            checks=False, rng=0,
        )  # fmt: skip
    path = save_mechanism(result, out / "generalisation_v1.json")
    applied = apply_mechanism(load_mechanism(path), batch_table())
    applied.released.assign(unseen=applied.unseen).to_csv(
        out / "generalisation_v1_batch.csv", index=False
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
