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


def _same_point(alone: dict[str, object], of_curve: dict[str, object]) -> None:
    """A point refitted alone equals the point of the whole curve, which is fitted as one
    stacked program: the same arithmetic up to float32 rounding in another summation order."""
    assert alone.keys() == of_curve.keys()
    for key, value in alone.items():
        if isinstance(value, float):
            assert value == pytest.approx(of_curve[key], rel=1e-6, abs=1e-9), key
        else:
            assert value == of_curve[key], key


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
    _same_point(refit_point(cfg, curve, 1), points[1])
    assert refit_point(cfg, curve, 0) != points[1]  # the points differ (data, seed, budget)


@pytest.mark.slow  # one point of the committed scalar curve: 120 epochs of 8,000 samples
def test_committed_scalar_record_agrees_with_a_fresh_fit_of_its_first_point() -> None:
    name = "tripathy2019_gaussian_scalar"
    committed = json.loads((ROOT / "experiments" / name / "results.json").read_text())
    fresh = refit_point(gallery.config(name)["settings"], "useful", 0)
    old = committed["results"]["useful"]["points"][0]
    for key, tol in gallery.config(name)["point_noise"].items():
        assert abs(fresh[key] - old[key]) <= tol, (key, fresh[key], old[key])


def test_a_curve_can_have_its_own_budgets_and_lambda(tmp_path: Path) -> None:
    """``<case>.curves.<curve>``: the paper's Fig. 5 sweeps the full-data curve over its own
    budgets with its own lambda; the other curve keeps the case's."""
    from privwatch.gallery.tripathy2019_gaussian import _case

    cfg = _tiny("tripathy2019_gaussian_scalar")
    own = {"deltas": {"start": 0.1, "stop": 0.3, "num": 3}, "ppan": {"lam": 7.0, "epochs": 2}}
    cfg["scalar"]["curves"] = {"full": own}
    assert _case(cfg, "full")["ppan"]["lam"] == 7.0
    assert _case(cfg, "useful")["ppan"]["lam"] == cfg["ppan"]["lam"] != 7.0
    rep = gallery.reproduce("tripathy2019_gaussian_scalar", tmp_path, overrides=cfg)
    res = rep.results["results"]
    assert len(res["useful"]["points"]) == 2
    assert [p["delta"] for p in res["full"]["points"]] == pytest.approx([0.1, 0.2, 0.3])
    _same_point(refit_point(cfg, "full", 2), res["full"]["points"][2])
