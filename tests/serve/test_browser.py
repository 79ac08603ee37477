"""The web app in a real browser (Selenium, Debian's ``chromium`` and ``chromium-driver``):
COMPAS as the source, its columns, run, MET, a frontier point chosen and audited, its release
downloaded and compared byte for byte with the CLI's ``release.csv`` for the same settings.
Screenshots at 1280 and 390 px wide are kept in the test's tmp dir."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Server, start_server

webdriver = pytest.importorskip("selenium.webdriver")
DRIVER = shutil.which("chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        DRIVER is None or CHROMIUM is None, reason="chromium and chromium-driver are not installed"
    ),
]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--disable-background-networking",
        "--no-first-run",
    ):
        options.add_argument(flag)
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(tmp_path / "downloads"),
            "download.prompt_for_download": False,
        },
    )
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_window_size(1280, 900)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, css: str, timeout: float = 240) -> Any:
    from selenium.webdriver.common.by import By

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        if found:
            return found[0]
        time.sleep(0.3)
    raise AssertionError(f"{css} did not appear in {timeout} s: {driver.page_source[:2000]}")


def _verdict(driver: Any, before: str, timeout: float = 240) -> str:
    """The verdict of the job page that follows ``before`` (the page the form was sent from),
    once its job has finished (the page reloads itself then)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if driver.current_url.split("?")[0] != before.split("?")[0]:
                found = driver.find_elements(By.ID, "verdict")
                if found:
                    return str(found[0].text)
        except StaleElementReferenceException:
            pass
        time.sleep(0.3)
    raise AssertionError(f"no verdict in {timeout} s: {driver.page_source[:2000]}")


def _shot(driver: Any, path: Path, width: int) -> int:
    driver.set_window_size(width, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(int(height) + 100, 6000))
    driver.save_screenshot(str(path))
    inner = int(driver.execute_script("return window.innerWidth"))
    overflow = driver.execute_script(
        "return document.documentElement.scrollWidth > window.innerWidth + 1"
    )
    assert not overflow, f"the page is wider than its {inner} px window"
    driver.set_window_size(1280, 900)
    return inner


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with start_server(tmp_path / "data") as s:
        yield s


def test_the_flow_in_chromium(browser: Any, server: Server, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    shots = tmp_path / "screenshots"
    shots.mkdir()
    browser.get(server.url + "/")
    browser.find_element(By.ID, "demo").click()
    _wait(browser, "#audit-form")
    sensitive = browser.find_element(By.CSS_SELECTOR, "input[name=sensitive]:checked")
    assert sensitive.get_attribute("value") == "race"
    observed = [
        e.get_attribute("value")
        for e in browser.find_elements(By.CSS_SELECTOR, "input[name=observed]:checked")
    ]
    assert set(observed) == {"sex", "age", "priors_count", "length_of_stay", "decile_score"}
    _shot(browser, shots / "columns-1280.png", 1280)
    columns = browser.current_url
    browser.find_element(By.ID, "run").click()
    verdict = _verdict(browser, columns)
    assert verdict == "MET", browser.find_element(By.TAG_NAME, "main").text
    assert "adversary's belief" in browser.find_element(By.ID, "words").text
    assert browser.find_elements(By.CSS_SELECTOR, "#per-value tbody tr")
    for table in ("#classic-table", "#attack-table", "#bayes-table"):  # as report.html shows
        assert browser.find_elements(By.CSS_SELECTOR, f"{table} tbody tr"), table
    widths = {w: _shot(browser, shots / f"results-{w}.png", w) for w in (1280, 390)}
    assert widths[1280] == 1280 and widths[390] <= 500  # headless chromium's narrowest window

    # choose the frontier point at the largest epsilon, and audit it
    points = browser.find_elements(By.CSS_SELECTOR, "a.point circle")
    assert len(points) >= 2
    points[-1].click()
    chosen = _wait(browser, "#chosen")
    assert "nats of information kept" in chosen.text
    promised = browser.find_element(By.CSS_SELECTOR, "#chosen-verdict strong").text
    first = browser.current_url
    browser.find_element(By.ID, "rerun").click()
    assert _verdict(browser, first) == promised  # the point's verdict is the rerun's
    command = browser.find_element(By.ID, "command").text
    assert command.startswith("privwatch audit --epsilon ") and "--dataset compas" in command
    browser.find_element(By.CSS_SELECTOR, "a[data-file='release.csv']").click()
    downloaded = tmp_path / "downloads" / "release.csv"
    end = time.monotonic() + 30
    while not downloaded.is_file() and time.monotonic() < end:
        time.sleep(0.2)
    assert downloaded.is_file(), "the browser did not download release.csv"

    out = tmp_path / "cli"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "privwatch",
            *shlex.split(command)[1:],
            "--out",
            str(out),
            "--quiet",
        ],
        check=False,
        timeout=300,
    )
    assert downloaded.read_bytes() == (out / "release.csv").read_bytes()
    _shot(browser, shots / "rerun-1280.png", 1280)
    for png in shots.glob("*.png"):
        assert png.stat().st_size > 10_000, png
