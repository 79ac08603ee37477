from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
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
    # the library names its parameters (`sensitive`); the command line names its flags
    res = runner.invoke(app, ["leakage", "--dataset", "compas", "--sensitive", "zzz"])
    assert res.exit_code == 2 and "--sensitive must name a column" in res.stderr
    res = runner.invoke(app, ["leakage", "--dataset", "compas", "--alpha", "-1"])
    assert res.exit_code == 2 and "--alpha must be" in res.stderr
    assert "`" not in res.stderr


# ----------------------------------------------- figures (the catalogue's NOT_DRIVEN points here)


def test_public_plots_draw_what_they_are_given(tmp_path: Path) -> None:
    from privwatch.plotting import plot_ecdf, plot_lift_scatter, plot_tradeoff, save

    ax = plot_ecdf({"a": [3.0, 1.0, np.inf, 2.0]}, cap=2.5, xlabel="risk")
    xs, ys = ax.lines[0].get_data()
    np.testing.assert_array_equal(xs, [1.0, 2.0, 2.5, 2.5])  # sorted, inf drawn at the cap
    np.testing.assert_array_equal(ys, [0.25, 0.5, 0.75, 1.0])
    assert ax.get_xlabel() == "risk" and ax.get_ylabel() == "CDF"
    save(ax, tmp_path / "ecdf.png")
    ax = plot_tradeoff({"curve": ([0.1, 0.5], [0.2, 0.9])}, xlabel="eps", ylabel="kept")
    np.testing.assert_array_equal(ax.lines[0].get_xydata(), [[0.1, 0.2], [0.5, 0.9]])
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("eps", "kept")
    save(ax, tmp_path / "tradeoff.png")
    ll = np.array([[0.1, -0.2], [1.5, 0.3], [-0.4, 2.0]])
    ax = plot_lift_scatter(ll, epsilon=1.0, highlight=[False, True, True])
    np.testing.assert_array_equal(ax.collections[0].get_offsets(), ll)
    np.testing.assert_array_equal(ax.collections[1].get_offsets(), ll[1:])
    square = ax.lines[0].get_xydata()
    assert np.abs(square).max() == 1.0 and len(square) == 5
    path = save(ax, tmp_path / "sub" / "lift.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_frontier_figure_agrees_with_the_frontier_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 32: the tradeoff plot's y-axis ran to 0.63 nats while the table said 6.9 of 7 nats
    # kept, and its "chosen" line sat at another epsilon
    import privwatch.report._figures as figures

    drawn: list[Any] = []
    monkeypatch.setattr(figures, "save", lambda ax, path: drawn.append(ax))
    frontier = [
        {"epsilon": e, "information_nats": i, "information_global_nats": g}
        for e, i, g in ((0.5, 2.1, 1.0), (2.0, 6.9, 6.5), (1.0, 4.0, 3.2))
    ]
    figures.plot_frontier(frontier, 2.0, 6.9, 7.0, tmp_path / "tradeoff.png")
    (ax,) = drawn
    searched, global_only = ax.lines[0].get_xydata(), ax.lines[1].get_xydata()
    np.testing.assert_array_equal(searched, [[0.5, 2.1], [1.0, 4.0], [2.0, 6.9]])
    np.testing.assert_array_equal(global_only, [[0.5, 1.0], [1.0, 3.2], [2.0, 6.5]])
    published = [ln for ln in ax.lines if ln.get_label().startswith("published")]
    assert len(published) == 1
    np.testing.assert_array_equal(published[0].get_xydata(), [[2.0, 6.9]])
    low, high = ax.get_ylim()
    assert low == 0 and high >= 7.0  # the input's 7 nats and the release's 6.9 are on the axis
    assert "learned" not in ax.get_xlabel() and "epsilon" in ax.get_xlabel()
