"""The report speaks the language of whoever ran the audit (issue #40, bug 3).

The report of ``privwatch audit --dataset compas`` said "save it with `save_mechanism`=M.json":
a Python name, shown to someone who ran the command line. A command-line run's report now
writes flags (``--save-mechanism M.json``) and a Python run's report Python; each states the one
command that reproduces the audit, and following the report literally works.
"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from html import unescape
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import privwatch
from privwatch.audit import Bundled, Caller, run
from privwatch.cli import app
from privwatch.datasets import load_compas
from privwatch.report import write_audit

runner = CliRunner()


@pytest.fixture(autouse=True)
def _quiet() -> None:
    warnings.simplefilter("ignore")


def _said(out: Path) -> tuple[str, list[str]]:
    """The reproducing command and the next steps of ``out/report.html``, as a reader sees them."""
    html = (out / "report.html").read_text()
    command = re.search(r'id="reproduce">[^<]*<code>(.*?)</code>', html, re.S)
    steps = re.search(r'<ol id="next-steps">(.*?)</ol>', html, re.S)
    assert command is not None and steps is not None
    items = re.findall(r"<li>(.*?)</li>", steps.group(1), re.S)
    return unescape(command.group(1)), [unescape(i) for i in items]


def _leakage(out: Path) -> dict[str, Any]:
    doc = json.loads((out / "leakage.json").read_text())
    doc.pop("stamp")
    return doc


def _cli(command: str) -> Any:
    words = shlex.split(command)
    assert words[0] == "privwatch", command
    return runner.invoke(app, words[1:])


def test_command_line_report_says_flags_and_its_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["audit", "--dataset", "compas", "--out", "first"])
    assert res.exit_code == 0, res.output  # MET (README): the report says how to keep it
    command, steps = _said(tmp_path / "first")
    assert command == "privwatch audit --dataset compas --out first"
    assert len(steps) == 1 and "save it with --save-mechanism M.json" in steps[0], steps
    assert "save_mechanism" not in steps[0] and "`" not in steps[0]
    # followed literally: the command (the folder is taken: a new one), with the flag added
    again = command.replace("--out first", "--out second") + " --save-mechanism M.json"
    res = _cli(again)
    assert res.exit_code == 0, res.output
    assert _leakage(tmp_path / "second") == _leakage(tmp_path / "first")
    load_compas().iloc[:200].to_csv("NEW.csv", index=False)
    apply = re.search(r"then (privwatch apply M\.json NEW\.csv)", steps[0])
    assert apply is not None, steps[0]
    res = _cli(apply.group(1))
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv("privwatch-apply/release.csv")) == 200


def test_command_line_report_reproduces_options_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every option that differs from its default is in the command, those of ``--config``
    too (the file is not needed to reproduce), spelled as the parser spells them."""
    monkeypatch.chdir(tmp_path)
    frame = load_compas()[["race", "sex", "age", "priors_count"]].iloc[:1500]
    frame.to_csv("my data.csv", index=False)
    Path("cfg.toml").write_text("max_suppressed = 0.1\nfolds = 0\n")
    args = ["audit", "my data.csv", "--sensitive", "race", "--observed", "sex,age",
            "--epsilon", "1.5", "--no-local", "--bins", "age=4", "--config", "cfg.toml",
            "--out", "first", "-q"]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code in (0, 3), res.output
    command, _ = _said(tmp_path / "first")
    assert command == (
        "privwatch audit 'my data.csv' --sensitive race --observed sex,age --epsilon 1.5 "
        "--bins age=4 --out first --max-suppressed 0.1 --folds 0 --no-local"
    )
    res = _cli(command.replace("--out first", "--out second"))
    assert res.exit_code in (0, 3), res.output
    assert _leakage(tmp_path / "second") == _leakage(tmp_path / "first")


def test_python_report_says_python_and_its_call(tmp_path: Path) -> None:
    result = run(source=Bundled("compas"))
    assert result.satisfied
    write_audit(result, tmp_path / "first")
    command, steps = _said(tmp_path / "first")
    assert command == 'privwatch.audit.run(source=privwatch.audit.Bundled("compas"))'
    assert len(steps) == 1 and "--" not in steps[0], steps
    # followed literally: the call gives the same audit; the save and apply code run
    again = eval(command, {"privwatch": privwatch})  # the report's own call
    assert again.to_dict() | {"stamp": None} == result.to_dict() | {"stamp": None}
    code = re.findall(r"`([^`]+)`", steps[0])
    assert code[0] == 'result.generalisation().save("M.json")', steps[0]
    path = tmp_path / "M.json"
    eval(code[0].replace('"M.json"', repr(str(path))), {"result": result})
    new = load_compas().iloc[:200]
    applied = eval(code[1].replace('"M.json"', repr(str(path))),
                   {"privwatch": privwatch, "new": new})  # fmt: skip
    assert len(applied.released) == 200


def test_python_call_of_a_frame_and_of_options() -> None:
    """Options that differ from their defaults, as literals; a frame is named ``df``."""
    frame = load_compas()[["race", "sex", "age"]]
    result = run(source=frame, sensitive="race", observed=["sex", "age"], bins={"age": 4},
                 epsilon=0.9, disclosure="positive", folds=0, checks=False)  # fmt: skip
    assert result.caller == Caller(
        'privwatch.audit.run(source=df, sensitive="race", observed="sex,age", epsilon=0.9, '
        'bins={"age": 4}, disclosure="positive", folds=0, checks=False)  # df: the table audited'
    )
    again = eval(result.caller.command, {"privwatch": privwatch, "df": frame})
    assert again.to_dict() | {"stamp": None} == result.to_dict() | {"stamp": None}
    # the report's words for a Python caller: `name=value`, never a flag
    words = result.caller.words
    assert words("pass `max_suppressed`=0.2.") == "pass `max_suppressed=0.2`."
    assert words("try `disclosure`='positive' or") == 'try `disclosure="positive"` or'


def test_check_report_states_its_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    frame = load_compas()[["race", "sex", "c_charge_degree"]].iloc[:1000]
    frame.to_csv("orig.csv", index=False)
    frame[["sex", "c_charge_degree"]].to_csv("release.csv", index=False)
    res = runner.invoke(app, ["check", "orig.csv", "release.csv", "--sensitive", "race",
                              "--folds", "0", "--out", "first"])  # fmt: skip
    assert res.exit_code in (0, 3), res.output
    command, _ = _said(tmp_path / "first")
    assert command == (
        "privwatch check orig.csv release.csv --sensitive race --folds 0 --out first"
    )
    res = _cli(command.replace("--out first", "--out second"))
    assert res.exit_code in (0, 3), res.output
    assert _leakage(tmp_path / "second") == _leakage(tmp_path / "first")


def test_an_engine_audit_advises_the_save_it_makes(tmp_path: Path) -> None:
    """The engine route saves its generalisation (issue #42): a met audit's next step says to
    publish release.parquet (the record key and released columns only), keep scores.parquet,
    and release new records through the saved generalisation, which it can save."""
    from privwatch.report import next_steps

    pytest.importorskip("duckdb")
    data = tmp_path / "c.parquet"
    load_compas().to_parquet(data)
    (tmp_path / "o").mkdir()
    observed = ["sex", "age_cat", "priors_count"]
    result = run(source=str(data), sensitive="race", observed=observed, epsilon=1.5,
                 engine="duckdb", out=tmp_path / "o", checks=False)  # fmt: skip
    assert result.route == "engine" and result.satisfied
    (step,) = next_steps(result)
    assert "Publish release.parquet" in step and "scores.parquet" in step, step
    assert 'generalisation().save("M.json")' in step, step  # the Python caller's words
    release = pd.read_parquet(tmp_path / "o" / "release.parquet")
    assert list(release.columns) == ["record", *observed]  # what the step says it holds
    saved = result.generalisation().save(tmp_path / "M.json")  # what the step says works
    assert saved.is_file()
