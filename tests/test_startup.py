"""The command line starts without the heavy libraries it does not need (docs/architecture.md,
"Start-up cost"): an audit on an engine's route fits no learned model, so importing the command
line, and auditing a Parquet file on DuckDB with the plug-in counts, must not import
scikit-learn, ``scipy.stats`` or PyTorch (about 0.5 s of CPU on the 2-core machine)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HEAVY = ("sklearn", "scipy.stats", "torch")


def _loaded_after(code: str) -> list[str]:
    """The heavy modules loaded by a fresh interpreter after running ``code``."""
    report = f"import sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    probe = f"{code}\n{report}"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def test_importing_the_command_line_loads_no_heavy_library() -> None:
    assert _loaded_after("import privwatch.cli") == []
    # the probe can fail: a learned family pulls them in
    assert "sklearn" in _loaded_after("from privwatch.estimators import PosteriorLift")


def test_a_plugin_audit_on_duckdb_loads_no_heavy_library(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    rng = np.random.default_rng(0)
    n = 4000
    frame = pd.DataFrame(
        {"s": rng.integers(0, 2, n), "a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n)}
    )
    (tmp_path / "in").mkdir()
    frame.to_parquet(tmp_path / "in" / "part.parquet")
    code = (
        "from privwatch.cli import app\n"
        "try:\n"
        f"    app(['audit', {str(tmp_path / 'in' / '*.parquet')!r}, '--engine', 'duckdb',"
        " '--sensitive', 's', '--observed', 'a,b', '--epsilon', '1', '--out',"
        f" {str(tmp_path / 'out')!r}, '--json'], prog_name='privwatch')\n"
        "except SystemExit:\n"
        "    pass"
    )
    assert _loaded_after(code) == []
    leakage = json.loads((tmp_path / "out" / "leakage.json").read_text())
    assert leakage["route"] == "engine"  # the route the rule is about was the one taken


def test_not_fitted_error_is_scikit_learns_when_made() -> None:
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    import privwatch
    from privwatch.exceptions import NotFittedError, PrivwatchError

    assert privwatch.NotFittedError is NotFittedError
    assert issubclass(NotFittedError, SklearnNotFittedError)
    assert issubclass(NotFittedError, PrivwatchError)
    err = pickle.loads(pickle.dumps(NotFittedError("x")))
    assert type(err) is NotFittedError and str(err) == "x"
