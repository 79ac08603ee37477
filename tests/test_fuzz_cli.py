"""The CLI on a catalogue of malformed files (issue #19): one-line error, non-zero exit, no
traceback, no partial output.

Each file goes through ``privwatch leakage`` and ``privwatch audit`` in process (typer's
CliRunner: the exit must be a clean ``SystemExit``, never another exception); a few go through a
real subprocess too, so what is checked is what a user sees on the terminal.

``million-column-header`` is refused from its first line (more than
``privwatch.engines.MAX_COLUMNS`` columns), before pandas would spend minutes parsing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


GOOD_ROWS = "s,a,b\n" + "".join(f"{i % 2},{i % 3},{i % 5}\n" for i in range(40))

#: name -> file content. Every one is malformed for a table with columns s, a, b.
MALFORMED: dict[str, bytes] = {
    "empty": b"",
    "only-newlines": b"\n\n\n",
    "header-only": b"s,a,b\n",
    "one-column": b"s\n" + b"0\n1\n" * 20,
    "wrong-encoding": b"s,a,b\n" + "0,é,ü\n1,ß,ø\n".encode("latin-1") * 20,
    "utf16": GOOD_ROWS.encode("utf-16"),
    "binary": bytes(range(256)) * 8,
    "nul-bytes": b"s,a,b\n0,\x00,1\n1,2,\x00\n" * 10,
    "ragged-rows": b"s,a,b\n0,1\n1,2,3,4,5\n0,1,2\n" * 10,
    "bom-header": b"\xef\xbb\xbf" + b"x,a,b\n" + b"0,1,2\n1,2,3\n" * 10,
    "million-column-header": b",".join(b"c%d" % i for i in range(10**6)) + b"\n",
    "unterminated-quote": b's,a,b\n0,"abc,1\n1,2,3\n',
    "gzip-magic": b"\x1f\x8b\x08\x00" + b"\x00" * 100,
    "parquet-magic": b"PAR1" + b"\x00" * 64,
}

COMMANDS = {
    "leakage": ["leakage", "{path}", "--sensitive", "s"],
    "audit": ["audit", "{path}", "--sensitive", "s", "--out", "{out}"],
}


KNOWN_CLI_LAYER: dict[str, str] = {}  # case -> why it fails today (strict xfail)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "privwatch", *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
        env=env,
    )


def _cases() -> list[object]:
    out: list[object] = []
    for name in sorted(MALFORMED):
        for command in sorted(COMMANDS):
            marks: list[pytest.MarkDecorator] = []
            if name in KNOWN_CLI_LAYER:
                marks = [pytest.mark.xfail(strict=True, reason=KNOWN_CLI_LAYER[name])]
            out.append(pytest.param(name, command, marks=marks, id=f"{name}-{command}"))
    return out


def _args(tmp_path: Path, name: str, command: str) -> tuple[list[str], Path]:
    suffix = ".parquet" if name == "parquet-magic" else ".csv"
    path = _write(tmp_path / f"data{suffix}", MALFORMED[name])
    out = tmp_path / "out"
    return [a.format(path=path, out=out) for a in COMMANDS[command]], out


def _no_partial_output(tmp_path: Path, out: Path) -> None:
    assert not out.exists() or not any(out.iterdir()), "partial output left behind"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".privwatch-")]
    assert not leftovers, f"staging folders left behind: {leftovers}"


@pytest.mark.parametrize(("name", "command"), _cases())
def test_malformed_file_in_process(tmp_path: Path, name: str, command: str) -> None:
    from typer.testing import CliRunner

    from privwatch.cli import app

    args, out = _args(tmp_path, name, command)
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0, f"exit 0 on a malformed file ({name}): {result.output[-500:]}"
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.strip().splitlines() if line.strip()]
    assert 1 <= len(lines) <= 3, f"not a short error ({len(lines)} lines): {result.output[-1500:]}"
    if command == "audit":
        _no_partial_output(tmp_path, out)
    if name == "million-column-header":  # refused from the header line, with the count
        assert "at most 50,000 columns" in result.output, result.output
        assert "has 1,000,000" in result.output, result.output


@pytest.mark.parametrize("name", ["binary", "ragged-rows", "wrong-encoding"])
def test_malformed_file_subprocess(tmp_path: Path, name: str) -> None:
    args, out = _args(tmp_path, name, "audit")
    result = _run(args)
    text = result.stdout + result.stderr
    assert result.returncode != 0, f"exit 0 on a malformed file ({name}): {text[-500:]}"
    assert "Traceback" not in text, text[-2000:]
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    assert 1 <= len(lines) <= 3, f"not a short error ({len(lines)} lines): {text[-1500:]}"
    _no_partial_output(tmp_path, out)
