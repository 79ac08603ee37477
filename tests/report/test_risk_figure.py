"""The risk figure (lift.png) with infinite risks and an infinite epsilon (issue #40, bug 1).

``privwatch check orig.csv synth.csv --synthetic --sensitive race`` on a bootstrap resample of
an Adult-like census table ended in a traceback: its epsilon is the worst log-lift of a
synthetic cell on the original records, infinite there, and ``plot_risk`` set it as the axis
limit.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import privwatch.report._figures as figures
from privwatch.cli import app
from tests.release._reference_venvs import census_like


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The axes each figure would save (the file is still written)."""
    axes: list[Any] = []
    save = figures.save

    def keep(ax: Any, path: Path) -> None:
        axes.append(ax)
        save(ax, path)

    monkeypatch.setattr(figures, "save", keep)
    return axes


def _legend(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_check_synthetic_on_a_bootstrap_resample_writes_every_file(
    tmp_path: Path, drawn: list[Any]
) -> None:
    table = census_like(3_000, np.random.default_rng(0))
    resample = table.sample(n=len(table), replace=True, random_state=1)
    table.to_csv(tmp_path / "orig.csv", index=False)
    resample.to_csv(tmp_path / "synth.csv", index=False)
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CliRunner().invoke(app, ["check", str(tmp_path / "orig.csv"),
                                       str(tmp_path / "synth.csv"), "--synthetic", "--sensitive",
                                       "race", "--out", str(out)])  # fmt: skip
    assert isinstance(res.exception, SystemExit), repr(res.exception)  # not a traceback
    assert res.exit_code == 3, res.output  # no control set: not judged, hence not met
    assert (out / "lift.png").stat().st_size > 0 and (out / "report.html").exists()
    assert json.loads((out / "leakage.json").read_text())["epsilon"] == "inf"
    # the resample scores no record; its figure says so and names the infinite epsilon
    risk = drawn[-1]
    said = " ".join(t.get_text() for t in risk.texts)
    assert "no record risk to draw" in said and "epsilon = inf" in said


def test_infinite_risks_and_epsilon_are_clipped_and_said(tmp_path: Path, drawn: list[Any]) -> None:
    risk = np.array([0.1, np.inf, 0.5, np.inf, 0.7, 0.2])
    figures.plot_risk(risk, math.inf, tmp_path / "lift.png", risk > math.inf)
    ax = drawn[-1]
    _, hi = ax.get_xlim()
    assert math.isfinite(hi) and 0.7 < hi < 1.0  # the finite risks and the bar at the edge
    legend = _legend(ax)
    assert "infinite risk: 2 records" in legend
    assert any(t.startswith("epsilon = inf nats: off the axis") for t in legend)
    assert "All 6 records: 4 finite, 2 infinite" in ax.get_title()
    # a finite epsilon is still a line on the axis
    figures.plot_risk(risk, 0.3, tmp_path / "lift2.png", risk > 0.3)
    assert "epsilon = 0.3 nats" in _legend(drawn[-1])
