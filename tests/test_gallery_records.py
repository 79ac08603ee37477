"""The committed gallery records that no cheap fresh run repeats, checked against fresh runs of
part of the same command.

``tests/test_gallery.py`` checks the records whose whole or quick run takes seconds to minutes;
the records below take an hour or more, so they are checked piecewise, each within the noise its
config states:

- a sweep of independent cells (``sadeghi2020_settings``): every cell recomputed;
- a learned mechanism (``romanelli2020_cross_entropy``, the obfuscation records): a fit stopped
  after k iterations is the first k iterations of the full fit (same seed and data; nothing in a
  fit depends on its iteration budget). On the recording machine it repeats the record's history
  bit for bit, but these are small adversarial games: on another CPU, PyTorch's float32 kernels
  round differently and one ulp in iteration 1 is another trajectory by iteration 2 (issue #45).
  So the fresh prefix is compared with the record's *in distribution*: a summary of it (the mean
  of the last iterations, or of all k) must lie within the spread that other kernels and other
  seeds give around the record's, measured by ``benchmarks/hardware_spread.py`` (raw figures in
  ``benchmarks/results/hardware_spread.json``); each tolerance below says which spread it is.
  What is exact (the number of iterations and their epochs) is compared exactly;
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


#: The spreads below were measured by ``benchmarks/hardware_spread.py`` (2026-11-27, commit
#: 1512c44, one 2-core AMD EPYC, torch 2.13.0): 16 fresh runs of each check, 6 with the record's
#: seed under ``ATEN_CPU_CAPABILITY`` default / avx2 / unset (AVX-512) x 1 and 2 threads and 10 with
#: seeds 1-10 (native kernels, 1 thread). Each tolerance is 1.5x the largest distance of those
#: runs' figure from the record's (a 16-run maximum underestimates the tail), rounded up.

#: Quick run of romanelli2020_cross_entropy: the mean held-out accuracy of the last 3 of its 10
#: classifiers C_8..C_10, per generator loss. Record: cross entropy 0.988, mutual information
#: 0.348. The 16 runs: cross entropy 0.818-1.000 (largest distance 0.170; the kernel settings
#: alone: 0.012), mutual information 0.334-0.540 (0.191; kernels alone: 0.049).
CROSS_ENTROPY_LAST_3 = {"cross_entropy": 0.26, "mutual_information": 0.29}
#: The mutual-information generator hides the user and the cross-entropy one does not (Fig. 4):
#: the gap between the two means above was 0.40-0.64 in the 16 runs (record 0.64).
CROSS_ENTROPY_GAP = 0.3


@pytest.mark.slow  # 10 iterations of each of the two generators: about 30 s
def test_cross_entropy_quick_run_is_the_records_first_iterations(tmp_path: Path) -> None:
    """The quick run's last classifiers guess as well as the record's first 10 iterations' did,
    within the measured spread (``CROSS_ENTROPY_LAST_3``), and the two generators part ways.

    A trainer that does not train, or climbs the mutual information instead of descending it,
    leaves the mutual-information generator's classifier at about 1.0 (0.65 from the record)."""
    name = "romanelli2020_cross_entropy"
    fresh = gallery.reproduce(name, tmp_path, quick=True).results["results"]["runs"]
    record = _record(name)["runs"]
    n = gallery.config(name)["quick"]["cross_entropy"]["iterations"]
    last: dict[str, float] = {}
    for loss, tol in CROSS_ENTROPY_LAST_3.items():
        new, old = fresh[loss]["val_accuracy"], record[loss]["val_accuracy"][:n]
        assert len(new) == n == len(old)
        last[loss] = sum(new[-3:]) / 3
        assert abs(last[loss] - sum(old[-3:]) / 3) <= tol, (loss, new, old)
    # and the two generators part ways within those iterations, as in the record (Fig. 4)
    assert last["cross_entropy"] > last["mutual_information"] + CROSS_ENTROPY_GAP, last


def _stopped_after(kind: str, c: dict[str, Any], k: int) -> dict[str, Any]:
    """The dataset's settings ``c`` with the iteration budget of generator ``kind`` set to k."""
    c = dict(c)
    for key in ("obfuscator", f"obfuscator_{kind}"):
        if key in c:
            c[key] = {**c[key], "max_iter": k, "patience": k}
    return c


#: First 3 iterations of each generator (Laplace-seeded and anchors) and budget of the two
#: obfuscation records: the mean of each figure over the 3 iterations, against the record's mean.
#: Largest distance in the 16 runs, over the 4 fits of a data set (train accuracy, held-out
#: accuracy, held-out mutual information in nats, held-out displacement in metres):
#: synthetic 0.094, 0.095, 0.271, 29.5 m (all from other seeds; the kernel settings alone moved
#: only the Laplace-seeded generators, by at most 0.002 nats and 2.0 m); Gowalla 0.046, 0.073,
#: 0.148, 150.6 m (the displacement of the Laplace-seeded generator at L = 1,150 m, from the
#: kernel settings alone: its 2nd and 3rd iterations ranged 187-987 m, the record's 908 and 717).
PREFIX_MEAN = {
    "synthetic": {
        "train_accuracy": 0.15,
        "val_accuracy": 0.15,
        "val_mutual_information": 0.41,
        "val_distortion": 45.0,
    },
    "gowalla": {
        "train_accuracy": 0.07,
        "val_accuracy": 0.11,
        "val_mutual_information": 0.23,
        "val_distortion": 230.0,
    },
}


@pytest.mark.slow  # 3 iterations of 2 generators on 2 budgets: about 10 s per data set
@pytest.mark.parametrize(
    "name", ["romanelli2020_obfuscation_synthetic", "romanelli2020_obfuscation_gowalla"]
)
def test_first_iterations_of_each_generator_agree(name: str) -> None:
    """Each generator's first 3 iterations, summarised by the mean of each figure, lie within the
    measured spread of the record's (``PREFIX_MEAN``); their epochs are the record's exactly.

    A generator that is not trained keeps its initial displacement (the Laplace-seeded one
    18-118 m where the record's means are 103-581 m); one that climbs its privacy loss lets the
    attacker's training accuracy rise from 0.89 to 0.99 (anchors, L = 270 m), where the record's
    falls to 0.30 (``benchmarks/hardware_spread_power.py``)."""
    import torch

    from privwatch.gallery.romanelli2020_obfuscation import fit_learned, load

    k = 3
    settings = gallery.config(name)["settings"]
    dataset, seed = settings["part"], settings["seed"]
    tol = PREFIX_MEAN[dataset]
    data = load(dataset, seed)
    record = _record(name)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the record's run
    try:
        for case in settings[dataset]["cases"]:
            for kind in ("laplace", "anchors"):
                c = _stopped_after(kind, settings[dataset], k)
                ob, _, _ = fit_learned(kind, float(case["L"]), data, settings, c, seed)
                new = list(ob.history_)
                old = record[f"L={case['L']}"][f"learned_{kind}"]["history"][:k]
                assert [h["epoch"] for h in new] == [h["epoch"] for h in old] == list(range(k))
                for key, bound in tol.items():
                    mean_new = sum(h[key] for h in new) / k
                    mean_old = sum(h[key] for h in old) / k
                    assert abs(mean_new - mean_old) <= bound, (case, kind, key, new, old)
    finally:
        torch.set_num_threads(threads)


#: Point 0 of a PPAN curve refitted alone: distortion, Gaussian-approximation I(X; Z) (nats) and
#: its excess over the optimum, against the record's. Measured on 3 kernel settings (default,
#: avx2, AVX-512; 1 thread, as ``refit_point`` pins) and 4 other seeds (another data set and
#: initialisation; native kernels), each tolerance 1.5x the largest distance, rounded up. Largest
#: distances, kernels / seeds: paper (delta 0) 0.0000 / 0.0091, 0.0001 / 0.0184, 0.0001 / 0.0201;
#: vector (delta 0.1) 0.0048 / 0.0114, 0.0001 / 0.0442, 0.0048 / 0.0558; rate-distortion
#: (delta 0.1, 1,000 epochs) 0.0015 / 0.0024, 0.0289 / 0.0348, 0.0024 / 0.0645. The configs'
#: ``point_noise`` (0.01 each) was not measured: ``default`` kernels moved the rate-distortion
#: point's I(X; Z) by 0.029 nats.
PPAN_POINT_NOISE = {
    "tripathy2019_gaussian_paper": {
        "distortion": 0.014,
        "gaussian_mi": 0.028,
        "excess_over_optimum": 0.031,
    },
    "tripathy2019_gaussian_vector": {
        "distortion": 0.018,
        "gaussian_mi": 0.067,
        "excess_over_optimum": 0.084,
    },
    "tripathy2019_gaussian_rate_distortion": {
        "distortion": 0.0037,
        "gaussian_mi": 0.053,
        "excess_over_optimum": 0.097,
    },
}


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
    for key, tol in PPAN_POINT_NOISE[name].items():
        assert abs(fresh[key] - old[key]) <= tol, (key, fresh[key], old[key])
