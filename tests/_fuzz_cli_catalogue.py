"""The bad-value catalogue and the pass rule of the CLI option fuzzing (issues #19 and #40).

Every option and argument of ``privwatch audit``, ``privwatch check`` (aligned, and
``--synthetic`` with a control set) and ``privwatch apply`` is found from the command's own
parser, so an option added later is fuzzed without editing this file. Each gets, in turn, every
bad value of its type (:func:`bad_values`, plus :data:`EXTRA` for options whose meaning invites
more) appended to a :data:`BASELINES` command that succeeds.

Pass rule (:func:`judge`): either the command refuses the value (exit 2, a one-line
``error: ...`` or the parser's usage error naming the option; no traceback; no file written,
changed or left behind anywhere in the folder, staging folders included), or the value is
extreme but valid and the command completes (exit 0 or 3, every output written, no input
changed). A value no option can take (``nan``, ``abc`` for a number) must be refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import typer.main

from privwatch.cli import app

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]
#: case -> the command line that succeeds (files named as :func:`write_inputs` writes them).
BASELINES: dict[str, list[str]] = {
    "audit": ["audit", "orig.csv", "--sensitive", "s", "--observed", "a,b", "--folds", "0",
              "--no-checks"],
    "check": ["check", "orig.csv", "rel.csv", "--sensitive", "s", "--observed", "a,b",
              "--folds", "0", "--no-checks"],
    "check-synthetic": ["check", "orig.csv", "syn.csv", "--synthetic", "--sensitive", "s",
                        "--observed", "a,b", "--control", "ctl.csv"],
    "apply": ["apply", "m.json", "new.csv"],
}  # fmt: skip
#: What a run that completes writes into its output folder ("a|b": one of them; apply in an
#: engine writes release.parquet).
OUTPUTS = {"audit": ("report.html", "leakage.json"), "check": ("report.html", "leakage.json"),
           "apply": ("release.csv|release.parquet", "apply.json")}  # fmt: skip
#: Options that only change what is printed or whether a folder may be replaced: switches.
NOT_FUZZED = frozenset({"quiet", "as_json", "overwrite"})

FLOATS = ["nan", "inf", "-inf", "-1", "0", "abc", "1e308"]
INTS = ["-1", "0", "abc", "1.5", "99999999999999999999"]
TEXTS = ["", "zzz", ",", "a,,b", "s"]
PATHS = ["missing.csv", "adir", "", "orig.csv", "m.json"]
SPECS = ["", "a", "a=", "=3", "a=abc", "zz=3", "a=0", "a=99999999999"]
#: Values no option of that type can take.
MUST_REFUSE = {"float": {"nan", "abc"}, "int": {"abc", "1.5"}}
#: More values for options whose meaning invites them: a column that is the sensitive one, a
#: key that is not unique, a control set of other columns, an output folder under a file.
EXTRA: dict[str, list[str]] = {
    "observed": ["s,a", "a,a", "id"],
    "sensitive": ["a,b", "id"],
    "key": ["a", "id"],
    "control": ["rel.csv"],
    "out": ["orig.csv", "orig.csv/sub"],
    "save_mechanism_to": ["nodir/m.json"],
    "engine": ["duckdb"],
    "encoding": ["latin-1"],
}


def _kind(param: Any) -> str:
    if param.multiple:
        return "spec"
    annotation = param.type_descriptor.annotation
    return {float: "float", int: "int", Path: "path"}.get(annotation, "text")


def bad_values(param: Any) -> list[str]:
    """The catalogue's values for one click parameter, by its type (then :data:`EXTRA`)."""
    base = {"float": FLOATS, "int": INTS, "path": PATHS, "spec": SPECS, "text": TEXTS}
    return [*base[_kind(param)], *EXTRA.get(param.name, [])]


def fuzzed(case: str) -> list[Any]:
    """The parameters of a baseline's command that are fuzzed (all but switches)."""
    command = COMMANDS[BASELINES[case][0]]
    return [p for p in command.params
            if p.name not in NOT_FUZZED and not getattr(p, "is_flag", False)]  # fmt: skip


def option_cases() -> Iterator[tuple[str, str, list[str], str, bool]]:
    """(case id, baseline case, arguments, the parameter's name on the command line, must
    refuse) for every fuzzed parameter and value."""
    for case, base in BASELINES.items():
        arguments = [p.name for p in COMMANDS[base[0]].params if p.param_type_name == "argument"]
        for param in fuzzed(case):
            refuse = MUST_REFUSE.get(_kind(param), set())
            for value in bad_values(param):
                if param.param_type_name == "argument":
                    args = list(base)
                    args[1 + arguments.index(param.name)] = value
                    args += ["--out", "out"]
                    name = param.name.upper()
                elif param.name == "out":
                    args, name = [*base, "--out", value], "--out"
                else:
                    args, name = [*base, "--out", "out", param.opts[0], value], param.opts[0]
                yield f"{case}[{name}={value!r}]", case, [*args, "-q"], name, value in refuse


def write_inputs(folder: Path, mechanism: bytes) -> None:
    """The baselines' files: an original table (record id, sensitive s, observed a and b), a
    generalised release of it, a bootstrap resample (the synthetic table) and another one (the
    control set), new records and a saved mechanism; and an empty folder ``adir``."""
    rng = np.random.default_rng(0)
    n = 60
    s = rng.integers(0, 2, n)
    orig = pd.DataFrame({"id": np.arange(n), "s": s,
                         "a": ((s + rng.integers(0, 2, n)) % 3).astype(str),
                         "b": rng.integers(0, 3, n).astype(str)})  # fmt: skip
    orig.to_csv(folder / "orig.csv", index=False)
    rel = orig[["a", "b"]].copy()
    rel.loc[rel["a"] == "2", "a"] = "*"
    rel.to_csv(folder / "rel.csv", index=False)
    table = orig.drop(columns="id")
    table.sample(n, replace=True, random_state=1).to_csv(folder / "syn.csv", index=False)
    table.sample(n, replace=True, random_state=2).to_csv(folder / "ctl.csv", index=False)
    orig.iloc[:20].to_csv(folder / "new.csv", index=False)
    (folder / "m.json").write_bytes(mechanism)
    (folder / "adir").mkdir()


def make_mechanism(folder: Path) -> bytes:
    """A mechanism saved by an audit of the baseline table (for ``apply``)."""
    import privwatch as pw

    write_inputs(folder, b"")
    frame = pd.read_csv(folder / "orig.csv", dtype={"a": str, "b": str})
    result = pw.audit.run(source=frame[["s", "a", "b"]], sensitive="s", folds=0, checks=False)
    return result.generalisation().save(folder / "made.json").read_bytes()


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``folder`` with its size and modification time."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            p = Path(root) / name
            st = p.stat()
            out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns if p.is_file() else 0)
    return out


def judge(result: Any, case: str, args: list[str], name: str, must_refuse: bool,
          folder: Path, before: dict[str, tuple[int, int]]) -> str | None:  # fmt: skip
    """None if the run passes the rule of the module docstring, else why not."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"raw {type(result.exception).__name__}: {str(result.exception)[:160]}"
    after = snapshot(folder)
    changed = sorted(p for p in before if p in after and before[p] != after[p])
    if changed:
        return f"changed an input: {changed}"
    text = result.output.strip()
    if result.exit_code == 2:
        new = sorted(set(after) - set(before))
        if new:
            return f"refused but left {new[:5]}"
        lines = [line for line in text.splitlines() if line.strip()]
        if "Traceback" in text:
            return "a traceback"
        if text.startswith("error:"):
            return None if len(lines) == 1 else f"{len(lines)} lines: {text[:300]!r}"
        if "Usage:" in text and (name in text or name.lower() in text.lower()):
            return None
        return f"refused without a short error: {text[:300]!r}"
    if result.exit_code in (0, 3):
        if must_refuse:
            return f"exit {result.exit_code}: accepted {name} {args[-2]!r}"
        out = folder / args[args.index("--out") + 1]
        missing = [
            f
            for f in OUTPUTS[BASELINES[case][0]]
            if not any((out / one).is_file() for one in f.split("|"))
        ]
        return f"exit {result.exit_code} without {missing} in {out}" if missing else None
    return f"exit {result.exit_code}: {text[-300:]!r}"
