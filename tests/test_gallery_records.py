"""The committed gallery records that no cheap fresh run repeats, checked against fresh runs of
part of the same command.

``tests/test_gallery.py`` checks the records whose whole or quick run takes seconds to minutes;
the records below take an hour or more, so they are checked piecewise, each within the noise its
config states:

- a sweep of independent cells (``sadeghi2020_settings``): every cell recomputed;
- a learned mechanism (``romanelli2020_cross_entropy``, the obfuscation records): a fit stopped
  after k iterations repeats the first k iterations of the full fit (same seed and data; nothing
  in a fit depends on its iteration budget), so its history is compared with the record's;
- a curve of PPAN fits (``tripathy2019_gaussian_paper``, ``_vector``, ``_rate_distortion``): one
  point refitted alone by ``refit_point``, which fits a point exactly as the whole curve does
  (``tests/adversarial/test_gaussian_gallery.py``).

``CHECKED_BY`` names, for every experiment of the gallery, the test that holds its record to a
fresh run, so an experiment added without one fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from privwatch import gallery

ROOT = Path(__file__).resolve().parents[1]

HERE = "tests/test_gallery_records.py"
GALLERY = "tests/test_gallery.py"
PPAN_POINT = (HERE, "test_one_point_of_a_ppan_curve_agrees_with_a_fresh_fit")
#: experiment -> (test file, test function) that holds its committed record to a fresh run
CHECKED_BY = {
    "errata": (GALLERY, "test_cheap_runs_agree_with_record"),
    "hsu2019_compas": (GALLERY, "test_slow_quick_runs_agree_with_record"),
    "hsu2019_compas_plugin": (GALLERY, "test_hsu_plugin_run_agrees_with_record"),
    "hsu2019_funnel": (GALLERY, "test_cheap_runs_agree_with_record"),
    "romanelli2020_baselines": (GALLERY, "test_slow_quick_runs_agree_with_record"),
    "romanelli2020_cross_entropy": (HERE, "test_cross_entropy_quick_run_is_the_records_first_"),
    # the fits of romanelli2020_obfuscation_gowalla: its 100-hit values must equal that record's
    "romanelli2020_gowalla_hits": ("tests/test_romanelli2020_gowalla_hits.py", "test_the_fits_"),
    "romanelli2020_hits": (GALLERY, "test_cheap_runs_agree_with_record"),
    "romanelli2020_obfuscation_gowalla": (HERE, "test_first_iterations_of_each_generator_"),
    "romanelli2020_obfuscation_synthetic": (HERE, "test_first_iterations_of_each_generator_"),
    "romanelli2020_table2": ("tests/test_romanelli2020_table2.py", "test_committed_fit_of_ours_"),
    "sadeghi2020_settings": (HERE, "test_sadeghi_sweep_recomputed_equals_record"),
    "sadeghi2020_watchdog_mc": (GALLERY, "test_sadeghi_quick_run_agrees_with_record"),
    "tripathy2019_digits": (GALLERY, "test_slow_quick_runs_agree_with_record"),
    "tripathy2019_gaussian_paper": PPAN_POINT,
    "tripathy2019_gaussian_rate_distortion": PPAN_POINT,
    "tripathy2019_gaussian_scalar": (
        "tests/adversarial/test_gaussian_gallery.py",
        "test_committed_scalar_record_agrees_with_a_fresh_fit_of_its_first_point",
    ),
    "tripathy2019_gaussian_vector": PPAN_POINT,
    "tripathy2019_gaussian_vector_paper": (
        "tests/adversarial/test_gaussian_vector_paper_record.py",
        "test_committed_record_agrees_with_a_fresh_fit_of_one_point",
    ),
    "tripathy2019_symmetric_pair": (GALLERY, "test_slow_quick_runs_agree_with_record"),
}


def _record(name: str) -> dict[str, Any]:
    results: dict[str, Any] = json.loads(
        (ROOT / "experiments" / name / "results.json").read_text()
    )["results"]
    return results


def test_every_experiment_names_the_test_that_checks_its_record() -> None:
    """A test function (named by its full name or its start) that uses the experiment's name."""
    assert set(CHECKED_BY) == set(gallery.available())
    for name, (path, test) in CHECKED_BY.items():
        text = (ROOT / path).read_text()
        assert f"def {test}" in text, (name, path, test)
        assert path == HERE or name in text, (name, path)


def test_sadeghi_sweep_recomputed_equals_record() -> None:
    """Each (|S|, |X|, concentration) cell draws its pmfs from the same seed: recomputed, every
    row of the record comes back exactly, and the record's best settings follow from the rows."""
    from privwatch.gallery.sadeghi2020_settings import _best_per_shape, sweep

    record = _record("sadeghi2020_settings")
    assert sweep(gallery.config("sadeghi2020_settings")["settings"]) == record["sweep"]
    shapes = _best_per_shape(record["sweep"])
    assert shapes == record["per_shape"]
    assert min(shapes, key=lambda r: r["largest_shortfall"]) == record["best"]


@pytest.mark.slow  # 10 iterations of each of the two generators: about 30 s
def test_cross_entropy_quick_run_is_the_records_first_iterations(tmp_path: Path) -> None:
    name = "romanelli2020_cross_entropy"
    fresh = gallery.reproduce(name, tmp_path, quick=True).results["results"]["runs"]
    record = _record(name)["runs"]
    n = gallery.config(name)["quick"]["cross_entropy"]["iterations"]
    tol = gallery.config(name)["noise"]["runs/cross_entropy/val_accuracy/39"]
    for loss in ("cross_entropy", "mutual_information"):
        new, old = fresh[loss]["val_accuracy"], record[loss]["val_accuracy"][:n]
        assert len(new) == n
        assert max(abs(a - b) for a, b in zip(new, old, strict=True)) <= tol, (loss, new, old)
    # and the two generators part ways within those iterations, as in the record (Fig. 4)
    last = {loss: run["val_accuracy"][-1] for loss, run in fresh.items()}
    assert last["cross_entropy"] > last["mutual_information"] + 0.3


def _stopped_after(kind: str, c: dict[str, Any], k: int) -> dict[str, Any]:
    """The dataset's settings ``c`` with the iteration budget of generator ``kind`` set to k."""
    c = dict(c)
    for key in ("obfuscator", f"obfuscator_{kind}"):
        if key in c:
            c[key] = {**c[key], "max_iter": k, "patience": k}
    return c


@pytest.mark.slow  # 3 iterations of 2 generators on 2 budgets: about 10 s per data set
@pytest.mark.parametrize(
    "name", ["romanelli2020_obfuscation_synthetic", "romanelli2020_obfuscation_gowalla"]
)
def test_first_iterations_of_each_generator_agree(name: str) -> None:
    import torch

    from privwatch.gallery.romanelli2020_obfuscation import fit_learned, load

    k = 3
    cfg = gallery.config(name)
    settings, tol = cfg["settings"], cfg["prefix_noise"]
    dataset, seed = settings["part"], settings["seed"]
    data = load(dataset, seed)
    record = _record(name)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the record's run
    try:
        for case in settings[dataset]["cases"]:
            for kind in ("laplace", "anchors"):
                c = _stopped_after(kind, settings[dataset], k)
                ob, _, _ = fit_learned(kind, float(case["L"]), data, settings, c, seed)
                old = record[f"L={case['L']}"][f"learned_{kind}"]["history"][:k]
                assert len(ob.history_) == k == len(old)
                for new, then in zip(ob.history_, old, strict=True):
                    assert new["epoch"] == then["epoch"]
                    for key, bound in tol.items():
                        assert abs(new[key] - then[key]) <= bound, (case, kind, new, then)
    finally:
        torch.set_num_threads(threads)


@pytest.mark.slow
@pytest.mark.record  # one PPAN fit each: 1-3 CPU-minutes (rate-distortion: 1,000 epochs)
@pytest.mark.parametrize(
    ("name", "curve"),
    [
        ("tripathy2019_gaussian_paper", "useful"),
        ("tripathy2019_gaussian_vector", "useful"),
        ("tripathy2019_gaussian_rate_distortion", None),
    ],
)
def test_one_point_of_a_ppan_curve_agrees_with_a_fresh_fit(name: str, curve: str | None) -> None:
    from privwatch.gallery.tripathy2019_gaussian import refit_point

    record = _record(name)
    curve = curve or next(k for k, v in record.items() if isinstance(v, dict) and "points" in v)
    fresh = refit_point(gallery.config(name)["settings"], curve, 0)
    old = record[curve]["points"][0]
    for key, tol in gallery.config(name)["point_noise"].items():
        assert abs(fresh[key] - old[key]) <= tol, (key, fresh[key], old[key])
