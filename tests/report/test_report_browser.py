"""The HTML report in a real headless Chromium: it loads, with no console error, and every
section and image is there. Skipped (with the reason) where no Chromium is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from privwatch.datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from privwatch.report import audit, write_audit

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=5000",
]


def _run(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_report_renders_in_chromium(tmp_path: Path) -> None:
    out = tmp_path / "audit"
    write_audit(audit(load_compas(), "race", COMPAS_OBSERVED, bins=COMPAS_BINS), out)
    page = out / "report.html"
    proc = _run(page, tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln]
    assert not [ln for ln in console if re.search(r"error|uncaught|failed", ln, re.I)], console
    for section in ("data", "guarantee", "leakage", "lift", "flagged", "tradeoff", "settings"):
        assert f'id="{section}"' in dom, section
    assert 'data-images-loaded="2"' in dom  # both inline PNGs decoded
    shot = tmp_path / "report.png"
    proc = _run(page, tmp_path / "profile2", f"--screenshot={shot}", "--window-size=1100,2400")
    assert shot.exists() and shot.stat().st_size > 50_000
