"""The experiments gallery: configs state the paper's numbers, runs write only where told.

The always-run checks use the cheap experiments; the install test (a fresh virtualenv with a
non-editable install, then ``privwatch reproduce``) is marked slow.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from privwatch import gallery
from privwatch.cli import app

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", gallery.available())
def test_config_states_paper_numbers(name: str) -> None:
    cfg = gallery.config(name)
    for key in ("title", "paper_ref", "settings", "paper", "noise", "noise_note"):
        assert key in cfg, f"{name}: config lacks {key!r}"
    assert cfg["paper"], f"{name}: no paper rows"
    for row in cfg["paper"]:
        assert row["item"] and row["paper"] not in (None, "") and row["ours"], (name, row)


@pytest.mark.parametrize("name", gallery.available())
def test_committed_record_has_paper_beside_ours(name: str) -> None:
    path = ROOT / "experiments" / name / "results.json"
    if "not_recorded_because" in gallery.config(name):  # runnable, but no record yet: says why
        assert not path.exists() and len(gallery.config(name)["not_recorded_because"]) > 20
        return
    rec = json.loads(path.read_text())
    assert rec["experiment"] == name and not rec["quick"]
    cfg = gallery.config(name)
    assert [r["item"] for r in rec["side_by_side"]] == [r["item"] for r in cfg["paper"]]
    for row in rec["side_by_side"]:
        assert row["ours"] is not None, row
        assert row["ours"] == gallery.lookup(rec["results"], row["ours_path"])


def test_reproduce_refuses_to_overwrite_and_the_package(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{}")
    with pytest.raises(FileExistsError, match="already holds a results.json.*`overwrite`=True"):
        gallery.reproduce("sadeghi2020_watchdog_mc", tmp_path, quick=True)
    assert (tmp_path / "results.json").read_text() == "{}"
    # the command line writes it as the switch its parser accepts (issue #40)
    res = CliRunner().invoke(app, ["reproduce", "sadeghi2020_watchdog_mc", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "or pass --overwrite." in res.stderr, res.output
    inside = Path(gallery.__file__).parent / "out"
    with pytest.raises(ValueError, match="must lie outside the installed package"):
        gallery.reproduce("sadeghi2020_watchdog_mc", inside)
    assert not inside.exists()
    with pytest.raises(ValueError, match="`name` must be one of"):
        gallery.config("nope")


def test_gallery_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m privwatch.gallery`` (its parser lives in ``privwatch.cli``): lists, refuses a
    run without an output folder (argparse's status 2 and usage), runs into ``--out``."""
    from privwatch.gallery._command import main

    assert main(["--list"]) == 0
    assert "sadeghi2020_watchdog_mc  " in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["errata"])
    assert exc.value.code == 2 and "--out DIR is required" in capsys.readouterr().err
    assert main(["errata", "--out", str(tmp_path), "--quick"]) == 0
    assert f"results in {tmp_path}" in capsys.readouterr().out
    assert json.loads((tmp_path / "results.json").read_text())["quick"] is True


def _agree(name: str, fresh: dict[str, Any]) -> None:
    """Every ``noise`` entry: the fresh run is within the stated noise of the committed record."""
    committed = json.loads((ROOT / "experiments" / name / "results.json").read_text())["results"]
    assert gallery.config(name)["noise"], f"{name}: states no noise, so nothing would be compared"
    for path, tol in gallery.config(name)["noise"].items():
        a, b = gallery.lookup(fresh, path), gallery.lookup(committed, path)
        assert abs(float(a) - float(b)) <= tol, f"{name} {path}: fresh {a} vs committed {b} > {tol}"


def test_sadeghi_quick_run_agrees_with_record(tmp_path: Path) -> None:
    rep = gallery.reproduce("sadeghi2020_watchdog_mc", tmp_path / "out", quick=True)
    assert {p.name for p in rep.files} == {
        "results.json",
        "fig1_loglift_cdf.png",
        "fig2_nmil_cdf.png",
    }
    assert {p.name for p in tmp_path.iterdir()} == {"out"}
    _agree("sadeghi2020_watchdog_mc", rep.results["results"])


def test_hsu_plugin_run_agrees_with_record(tmp_path: Path) -> None:
    rep = gallery.reproduce("hsu2019_compas_plugin", tmp_path, quick=True)
    _agree("hsu2019_compas_plugin", rep.results["results"])


@pytest.mark.parametrize(
    ("name", "quick"),
    [("errata", True), ("hsu2019_funnel", False), ("romanelli2020_hits", True)],
)
def test_cheap_runs_agree_with_record(name: str, quick: bool, tmp_path: Path) -> None:
    """Seconds each: the funnel's whole run; the errata's and the hit counts' quick runs keep
    every entry of their ``noise``."""
    rep = gallery.reproduce(name, tmp_path, quick=quick)
    _agree(name, rep.results["results"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "hsu2019_compas",
        "romanelli2020_baselines",
        # its quick settings are the full run (about 160 CPU-s): an opt-in record refit
        pytest.param("tripathy2019_symmetric_pair", marks=pytest.mark.record),
        "tripathy2019_digits",
    ],
)
def test_slow_quick_runs_agree_with_record(name: str, tmp_path: Path) -> None:
    rep = gallery.reproduce(name, tmp_path, quick=True)
    _agree(name, rep.results["results"])


def _snapshot(root: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_reproduce_after_plain_install_writes_only_out(tmp_path: Path) -> None:
    """``pip install .`` (not editable) into a fresh venv, then ``privwatch reproduce``."""
    src = tmp_path / "src_copy"  # build from a copy: building writes build/ and egg-info
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src / f)
    venv = tmp_path / "venv"  # no pip nor setuptools of its own: this pip installs into it
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # the dependencies come from this interpreter's site-packages (no download, no privwatch:
    # a path line does not run that folder's .pth files, so an editable install stays invisible)
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_privwatch_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(src),
        ],
        check=True,
    )
    installed = site / "privwatch"
    assert (installed / "gallery" / "configs" / "sadeghi2020_watchdog_mc.json").is_file()
    before_pkg = _snapshot(installed)
    watched = [ROOT / "experiments", ROOT / "src" / "privwatch" / "gallery"]
    before_repo = {k: v for w in watched for k, v in _snapshot(w).items()}
    work = tmp_path / "cwd"
    work.mkdir()
    out = tmp_path / "out"
    t0 = time.time()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)
    res = subprocess.run(
        [
            venv / "bin" / "privwatch",
            "reproduce",
            "sadeghi2020_watchdog_mc",
            "--out",
            out,
            "--quick",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    origin = subprocess.run(
        [py, "-c", "import privwatch; print(privwatch.__file__)"], capture_output=True, text=True
    ).stdout
    assert str(installed) in origin, origin  # the installed copy ran, not the checkout
    assert sorted(p.name for p in out.iterdir()) == [
        "fig1_loglift_cdf.png",
        "fig2_nmil_cdf.png",
        "results.json",
    ]
    assert list(work.iterdir()) == []
    assert _snapshot(installed) == before_pkg, "the run wrote inside the installed package"
    after_repo = {k: v for w in watched for k, v in _snapshot(w).items()}
    assert after_repo == before_repo, "the run wrote inside the checkout"
    new_outputs = [
        p
        for p in ROOT.rglob("*")
        if p.suffix in (".png", ".json") and ".git" not in p.parts and p.stat().st_mtime > t0
    ]
    assert new_outputs == [], new_outputs
    assert json.loads((out / "results.json").read_text())["quick"] is True


def test_an_experiment_leaves_the_callers_torch_rng_alone() -> None:
    torch = pytest.importorskip("torch")
    from privwatch.gallery import _caller_rng_kept

    before = torch.get_rng_state()
    with _caller_rng_kept():
        torch.manual_seed(12345)  # what the PPAN experiments do for their initial weights
        torch.rand(3)
    assert torch.equal(torch.get_rng_state(), before)
