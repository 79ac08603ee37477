"""The memory budget of an audit: the case that once allocated ~24 GB (`--bins z=1000000000
--force`, issue #19) fails in under a second with the memory-budget error, through the CLI and
through the library (:func:`privwatch.audit.run`)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from privwatch.audit import run
from privwatch.cli import app
from privwatch.exceptions import MemoryBudgetError


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"s": rng.integers(0, 2, 200).astype(str), "z": rng.normal(size=200)})


def test_cli_huge_bin_count_fails_fast_with_the_budget_error(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    _table().to_csv(data, index=False)
    args = ["audit", str(data), "--sensitive", "s", "--bins", "z=1000000000", "--force"]
    start = time.perf_counter()
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "out")])
    elapsed = time.perf_counter() - start
    assert res.exit_code != 0
    assert "asks for" in res.output and "memory budget" in res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert elapsed < 1.0


def test_library_huge_bin_count_fails_fast_with_the_budget_error() -> None:
    start = time.perf_counter()
    with pytest.raises(MemoryBudgetError, match=r"`bins\['z'\]` asks for"):
        run(source=_table(), sensitive="s", observed=["z"], bins={"z": 10**9}, force=True)
    assert time.perf_counter() - start < 1.0
