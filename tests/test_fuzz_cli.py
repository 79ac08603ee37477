"""The CLI on a catalogue of malformed files and of bad option values (issues #19 and #40):
one-line error, non-zero exit, no traceback, no partial output.

Each file goes through ``privwatch leakage``, ``privwatch audit``, ``privwatch check`` (as the
original, as the release, as a synthetic table) and ``privwatch apply`` (as the new records, as
the mechanism) in process (typer's CliRunner: the exit must be a clean ``SystemExit``, never
another exception); a few go through a real subprocess too, so what is checked is what a user
sees on the terminal. Every option and argument of audit, check (aligned and ``--synthetic``)
and apply gets every bad value of its type (:mod:`tests._fuzz_cli_catalogue`, which states the
pass rule).

``million-column-header`` is refused from its first line (more than
``privwatch.engines.MAX_COLUMNS`` columns), before pandas would spend minutes parsing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privwatch.cli import app

from ._fuzz_cli_catalogue import (
    BASELINES,
    COMMANDS,
    EXTRA,
    fuzzed,
    judge,
    make_mechanism,
    option_cases,
    snapshot,
    write_inputs,
)


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

FILE_COMMANDS = {
    "leakage": ["leakage", "{path}", "--sensitive", "s"],
    "audit": ["audit", "{path}", "--sensitive", "s", "--out", "{out}"],
    "check": ["check", "{path}", "{good}", "--sensitive", "s", "--out", "{out}"],
    "check-release": ["check", "{good}", "{path}", "--sensitive", "s", "--out", "{out}"],
    "check-synthetic": ["check", "{good}", "{path}", "--synthetic", "--sensitive", "s",
                        "--out", "{out}"],
    "apply": ["apply", "{mechanism}", "{path}", "--out", "{out}"],
    "apply-mechanism": ["apply", "{path}", "{good}", "--out", "{out}"],
}  # fmt: skip


KNOWN_CLI_LAYER: dict[str, str] = {}  # case -> why it fails today (strict xfail)
#: Files that are malformed for a table with a sensitive column s, but are valid new records
#: for apply, which reads only the observed columns a and b: released, exit 0.
VALID_FOR_APPLY = {"bom-header", "header-only"}


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
        for command in sorted(FILE_COMMANDS):
            marks: list[pytest.MarkDecorator] = []
            if name in KNOWN_CLI_LAYER:
                marks = [pytest.mark.xfail(strict=True, reason=KNOWN_CLI_LAYER[name])]
            out.append(pytest.param(name, command, marks=marks, id=f"{name}-{command}"))
    return out


@pytest.fixture(scope="module")
def mechanism(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A mechanism saved by an audit of a table with columns s, a and b (for apply)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_mechanism(tmp_path_factory.mktemp("mechanism"))


def _args(tmp_path: Path, name: str, command: str, mechanism: bytes) -> tuple[list[str], Path]:
    suffix = ".parquet" if name == "parquet-magic" else ".csv"
    suffix = ".json" if command == "apply-mechanism" and suffix == ".csv" else suffix
    path = _write(tmp_path / f"data{suffix}", MALFORMED[name])
    good = _write(tmp_path / "good.csv", GOOD_ROWS.encode())
    saved = _write(tmp_path / "m.json", mechanism)
    out = tmp_path / "out"
    args = [
        a.format(path=path, out=out, good=good, mechanism=saved) for a in FILE_COMMANDS[command]
    ]
    return args, out


def _no_partial_output(tmp_path: Path, out: Path) -> None:
    assert not out.exists() or not any(out.iterdir()), "partial output left behind"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".privwatch-")]
    assert not leftovers, f"staging folders left behind: {leftovers}"


@pytest.mark.parametrize(("name", "command"), _cases())
def test_malformed_file_in_process(
    tmp_path: Path, name: str, command: str, mechanism: bytes
) -> None:
    args, out = _args(tmp_path, name, command, mechanism)
    result = CliRunner().invoke(app, args)
    if command == "apply" and name in VALID_FOR_APPLY:
        assert result.exit_code == 0 and (out / "apply.json").is_file(), result.output
        return
    assert result.exit_code != 0, f"exit 0 on a malformed file ({name}): {result.output[-500:]}"
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.strip().splitlines() if line.strip()]
    assert 1 <= len(lines) <= 3, f"not a short error ({len(lines)} lines): {result.output[-1500:]}"
    if command != "leakage":
        _no_partial_output(tmp_path, out)
    if name == "million-column-header" and command != "apply-mechanism":  # read as a table:
        # refused from the header line, with the count
        assert "at most 50,000 columns" in result.output, result.output
        assert "has 1,000,000" in result.output, result.output
    if command == "apply-mechanism":  # the error names the argument the user gave
        assert "MECHANISM" in result.output and "DATA" not in result.output, result.output


@pytest.mark.parametrize("name", ["binary", "ragged-rows", "wrong-encoding"])
def test_malformed_file_subprocess(tmp_path: Path, name: str, mechanism: bytes) -> None:
    args, out = _args(tmp_path, name, "audit", mechanism)
    result = _run(args)
    text = result.stdout + result.stderr
    assert result.returncode != 0, f"exit 0 on a malformed file ({name}): {text[-500:]}"
    assert "Traceback" not in text, text[-2000:]
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    assert 1 <= len(lines) <= 3, f"not a short error ({len(lines)} lines): {text[-1500:]}"
    _no_partial_output(tmp_path, out)


# --- bad option values: every option of audit, check and apply ----------------------------

#: Option cases that fail today, by case id (strict xfails): keep empty, an entry is a bug.
KNOWN_OPTION_CASES: dict[str, str] = {}


def _option_params() -> list[object]:
    out: list[object] = []
    for cid, case, args, name, refuse in option_cases():
        marks = []
        if cid in KNOWN_OPTION_CASES:
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_OPTION_CASES[cid])]
        out.append(pytest.param(case, args, name, refuse, marks=marks, id=cid))
    return out


@pytest.mark.parametrize(("case", "args", "name", "must_refuse"), _option_params())
def test_bad_option_value(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mechanism: bytes,
    case: str,
    args: list[str],
    name: str,
    must_refuse: bool,
) -> None:
    write_inputs(tmp_path, mechanism)
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(app, args)
    reason = judge(result, case, args, name, must_refuse, tmp_path, before)
    assert reason is None, f"{' '.join(args)}: {reason}"


def test_option_catalogue_covers_every_option() -> None:
    """Every option and argument of each command is fuzzed (a new one is, by its type), and
    EXTRA names only parameters that exist (a rename must not drop coverage silently)."""
    ids = {cid for cid, *_ in option_cases()}
    for case in BASELINES:
        for param in fuzzed(case):
            flag = param.opts[0] if param.param_type_name == "option" else param.name.upper()
            assert any(cid.startswith(f"{case}[{flag}=") for cid in ids), (case, flag)
    names = {p.name for command in ("audit", "check", "apply") for p in COMMANDS[command].params}
    assert set(EXTRA) <= names, set(EXTRA) - names
    assert {base[0] for base in BASELINES.values()} == {"audit", "check", "apply"}
    assert len(ids) > 300


@pytest.mark.parametrize("case", sorted(BASELINES))
def test_option_baselines_succeed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mechanism: bytes, case: str
) -> None:
    """The command every bad value is put into works (else the cases pass vacuously)."""
    write_inputs(tmp_path, mechanism)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(app, [*BASELINES[case], "--out", "out", "-q"])
    assert result.exit_code in (0, 3), result.output
    assert judge(result, case, [*BASELINES[case], "--out", "out", "-q"], "", False, tmp_path,
                 snapshot(tmp_path)) is None  # fmt: skip
