"""Library messages rewritten as flags (cli/_flags.py): the advice a command prints is advice
its parser accepts, followed literally (issue #40, bug 2).

Continuous observed columns with ``--estimator classifier`` were refused with "... or pass
--force True."; ``--force`` is a switch, so the parser refused ``True``. The full stop was read
as part of the value (``True.``), which is not ``True``, so the switch rule did not apply.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import typer.main
from typer.testing import CliRunner

from privwatch.cli import app
from privwatch.cli._flags import ON_ONLY, args_to_flags, flag, to_flags

runner = CliRunner()
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def _options(command: str) -> list[Any]:
    return [p for p in COMMANDS[command].params if p.param_type_name == "option"]


#: The arguments a command cannot parse without (file names: parsing does not open them).
REQUIRED = {"apply": ["m.json", "new.csv"], "check": ["orig.csv", "release.csv"]}


def _parse(command: str, args: list[str]) -> dict[str, Any]:
    """The parameters the command's own parser makes of ``args`` (raises on a usage error)."""
    args = [*REQUIRED.get(command, []), *args]
    ctx = COMMANDS[command].make_context(command, args, resilient_parsing=False)
    return dict(ctx.params)


def _advice(message: str) -> list[str]:
    """The flags a one-line error tells the user to pass ("... or pass --force.")."""
    found = re.search(r"pass (.+?)\.?$", message.strip())
    assert found is not None, message
    return shlex.split(found.group(1))


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("or pass `force`=True.", "or pass --force."),
        ("or pass `force`=True", "or pass --force"),
        ("with `local`=False, nothing", "with --no-local, nothing"),
        ("(`synthetic`=True)", "(--synthetic)"),
        ("pass `synthetic`=False.", "pass without --synthetic."),
        ("pass `overwrite`=True to replace", "pass --overwrite to replace"),
        ("allow `max_suppressed`=0.2.", "allow --max-suppressed 0.2."),
        (
            "save it with `save_mechanism`=M.json, then",
            "save it with --save-mechanism M.json, then",
        ),
        ("`disclosure`='positive'.", "--disclosure positive."),
    ],
)
def test_booleans_are_switches_and_a_full_stop_is_not_a_value(message: str, expected: str) -> None:
    assert to_flags(message) == expected


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_is_written_as_its_parser_spells_it(command: str) -> None:
    """flag(name) is an option of the command; a boolean's True and False, as to_flags writes
    them, parse to that value in every command that has the switch."""
    for param in _options(command):
        assert flag(param.name) in param.opts, (command, param.name, param.opts)
        if not param.is_flag or param.name == "version":
            continue
        on = to_flags(f"`{param.name}`=True")
        assert _parse(command, shlex.split(on))[param.name] is True, (command, on)
        off = to_flags(f"`{param.name}`=False")
        if param.name in ON_ONLY:
            assert off == f"without {flag(param.name)}"
            assert _parse(command, [])[param.name] is False
        else:
            assert param.secondary_opts, f"{command} {param.name}: add it to ON_ONLY"
            assert _parse(command, shlex.split(off))[param.name] is False, (command, off)


def test_alternatives_as_flags_parse() -> None:
    args = {"epsilon": 1.38, "local": False, "disclosure": "positive", "max_suppressed": 0.1}
    text = args_to_flags(args)
    assert text == "--epsilon 1.38 --no-local --disclosure positive --max-suppressed 0.1"
    params = _parse("audit", ["d.csv", *shlex.split(text)])
    assert params["local"] is False and params["max_suppressed"] == 0.1


def _continuous(path: Path, n: int = 60) -> Path:
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, n)
    frame = pd.DataFrame({"s": s, "x": rng.normal(size=n) + s, "id": np.arange(n)})
    frame.to_csv(path, index=False)
    return path


def test_classifier_refusal_advice_is_accepted(tmp_path: Path) -> None:
    """The issue's case (#40 bug 2): the refusal's advice, appended literally, parses. Since
    #41 a learned estimator reads continuous columns as they are; a record number (whole
    numbers, one per record: `id`) is still refused, with that advice (the run itself, a
    classifier fit, is left to the estimator tests)."""
    args = ["audit", str(_continuous(tmp_path / "c.csv")), "--sensitive", "s", "--estimator",
            "classifier", "--out", str(tmp_path / "o")]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    message = res.stderr.strip()
    assert "distinct value in every record" in message and "True" not in message, message
    assert "'id'" in message and "'x'" not in message, message
    advice = _advice(message)
    assert advice == ["--force"], message
    assert _parse("audit", [*args[1:], *advice])["force"] is True


def test_identifier_advice_followed_literally_runs(tmp_path: Path) -> None:
    """The same refusal on the plug-in route, and the command rerun with the advice: it runs to
    its verdict (exit 0 or 3), not a usage error (exit 2)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"s": rng.integers(0, 2, 200), "a": rng.integers(0, 3, 200),
                          "id": np.arange(200)})  # fmt: skip
    frame.to_csv(tmp_path / "d.csv", index=False)
    args = ["audit", str(tmp_path / "d.csv"), "--sensitive", "s", "--folds", "0", "--no-checks",
            "--out", str(tmp_path / "o")]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "pass --force." in res.stderr, res.output
    res = runner.invoke(app, [*args, *_advice(res.stderr)])
    assert res.exit_code in (0, 3), res.output
    assert (tmp_path / "o" / "report.html").exists()
