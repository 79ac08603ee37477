"""The HTML report in a real headless Chromium (Debian ``chromium``), at 1280 and 390 px wide:
it loads with no console error, every section and image is there, nothing overflows the page,
and the records drawn add up to N. Skipped (with the reason) where no Chromium is installed;
.ci/run installs it."""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from privwatch.audit import run
from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.release import ReleaseNotMetWarning
from privwatch.report import write_audit

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=5000",
]
SECTIONS = (
    "findings",
    "classic",
    "reidentification",
    "attack",
    "warnings",
    "data",
    "guarantee",
    "leakage",
    "lift",
    "flagged",
    "tradeoff",
    "settings",
    "glossary",
)


def _run(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(
            source=load_compas(), sensitive="race", observed=COMPAS_OBSERVED, bins=COMPAS_BINS
        )
    # MET or NOT MET is the held-out estimator's call (issue 32); a release that is not met
    # warns, and the warning is kept in the report
    not_met = [w for w in caught if issubclass(w.category, ReleaseNotMetWarning)]
    assert bool(not_met) == (not result.satisfied)
    write_audit(result, out)
    return out / "report.html"


@pytest.mark.parametrize("width", [1280, 390])
def test_report_renders_in_chromium(report: Path, tmp_path: Path, width: int) -> None:
    proc = _run(report, tmp_path / "profile", "--dump-dom", f"--window-size={width},2000")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln]
    assert not [ln for ln in console if re.search(r"error|uncaught|failed", ln, re.I)], console
    for section in SECTIONS:
        assert f'id="{section}"' in dom, section
    # issue 32: the per-value table and the next steps render; no record's values by default
    assert 'id="per-value"' in dom and 'id="next-steps"' in dom
    assert 'id="record-level"' not in dom
    assert 'data-images-loaded="2"' in dom  # both inline PNGs decoded
    assert 'data-overflow="no"' in dom  # nothing wider than the window
    drawn = re.search(r"All ([\d,]+) of ([\d,]+) records are drawn", dom)
    assert drawn is not None and drawn.group(1) == drawn.group(2) == "5,278"
    shot = tmp_path / f"report-{width}.png"
    proc = _run(
        report, tmp_path / "profile2", f"--screenshot={shot}", f"--window-size={width},2400"
    )
    assert shot.exists() and shot.stat().st_size > 50_000
