"""The Gaussian PPAN gallery (Tripathy, Wang, Ishwar Figs. 4-6): one point of a curve can be
refitted alone, exactly as the whole curve fits it, so a committed record is checked point by
point against a fresh fit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from privwatch import gallery
from privwatch.gallery.tripathy2019_gaussian import refit_point

ROOT = Path(__file__).resolve().parents[2]


def _tiny(name: str) -> dict[str, Any]:
    """The experiment's settings shrunk to seconds: 400 / 200 samples, 2 budgets, 2 epochs."""
    cfg: dict[str, Any] = gallery.config(name)["settings"]
    part = cfg["part"]
    cfg.update(n_train=400, n_test=200, n_jobs=1)
    cfg["ppan"] = {**cfg["ppan"], "epochs": 2}
    cfg[part] = {**cfg[part], "deltas": {**cfg[part]["deltas"], "num": 2}}
    cfg[part]["ppan"] = {**cfg[part].get("ppan", {}), "epochs": 2}
    return cfg


@pytest.mark.parametrize(
    ("name", "curve"),
    [("tripathy2019_gaussian_scalar", "full"), ("tripathy2019_gaussian_vector_paper", "useful")],
)
def test_a_point_refitted_alone_equals_the_point_of_the_whole_curve(
    name: str, curve: str, tmp_path: Path
) -> None:
    cfg = _tiny(name)
    rep = gallery.reproduce(name, tmp_path, overrides=cfg)
    points = rep.results["results"][curve]["points"]
    assert refit_point(cfg, curve, 1) == points[1]
    assert refit_point(cfg, curve, 0) != points[1]  # the points differ (data, seed, budget)


@pytest.mark.slow  # one point of the committed scalar curve: 120 epochs of 8,000 samples
def test_committed_scalar_record_agrees_with_a_fresh_fit_of_its_first_point() -> None:
    name = "tripathy2019_gaussian_scalar"
    committed = json.loads((ROOT / "experiments" / name / "results.json").read_text())
    fresh = refit_point(gallery.config(name)["settings"], "useful", 0)
    old = committed["results"]["useful"]["points"][0]
    for key, tol in gallery.config(name)["point_noise"].items():
        assert abs(fresh[key] - old[key]) <= tol, (key, fresh[key], old[key])
