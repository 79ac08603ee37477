from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from privwatch.cli import app

runner = CliRunner()


def test_leakage_on_bundled_compas() -> None:
    res = runner.invoke(app, ["leakage", "--dataset", "compas", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n_records"] == 5278
    assert 0 < out["measures"]["mutual_information"] < out["measures"]["entropy_sensitive"]


def test_leakage_table_on_csv(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 500)
    df = pd.DataFrame(
        {"s": s, "a": (s + rng.integers(0, 2, 500)) % 3, "age": rng.integers(18, 90, 500)}
    )
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    res = runner.invoke(app, ["leakage", str(path), "--sensitive", "s", "--bins", "age=30,60"])
    assert res.exit_code == 0, res.output
    assert "mutual_information" in res.stdout and "maximal_leakage" in res.stdout


def test_leakage_refuses_unbinned_numeric(tmp_path: Path) -> None:
    df = pd.DataFrame({"s": [0, 1] * 50, "age": np.arange(100)})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    res = runner.invoke(app, ["leakage", str(path), "--sensitive", "s"])
    assert res.exit_code == 2
    assert "'age' (100 distinct values)" in res.stderr
    assert "--bins" in res.stderr


def test_leakage_errors(tmp_path: Path) -> None:
    res = runner.invoke(app, ["leakage", str(tmp_path / "nope.csv"), "--sensitive", "s"])
    assert res.exit_code == 2 and "not found" in res.stderr
    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    res = runner.invoke(app, ["leakage", str(binary), "--sensitive", "s"])
    assert res.exit_code == 2 and "readable CSV" in res.stderr
    res = runner.invoke(app, ["leakage", "--dataset", "mnist"])
    assert res.exit_code == 2 and "--dataset must be one of" in res.stderr
    res = runner.invoke(app, ["leakage", "--dataset", "compas", "--sensitive", "zzz"])
    assert res.exit_code == 2 and "`sensitive` must name a column" in res.stderr
    res = runner.invoke(app, ["leakage", "--dataset", "compas", "--alpha", "-1"])
    assert res.exit_code == 2 and "`alpha` must be" in res.stderr
