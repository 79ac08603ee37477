"""Golden outputs of ``privwatch audit``: the cases, how they run, how outputs are normalised.

Used by ``tests/audit/test_golden.py``; run as a script to (re)write the golden files from the
code on ``sys.path`` (the child processes inherit the environment, ``PYTHONPATH`` included)::

    .venv/bin/python -m tests.audit._golden             # every case
    .venv/bin/python -m tests.audit._golden raw_compas  # some cases

Run it only for a deliberate change of behaviour, and say in the commit which one.
``--inputs`` rewrites the Parquet inputs too (from fixed numpy seeds); they are committed so
that the goldens do not depend on the numpy version.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

GOLDEN = Path(__file__).resolve().parent / "golden"
INPUTS = GOLDEN / "inputs"
#: The observed columns of raw COMPAS, each with a shared ARX hierarchy in INPUTS/hierarchies.
COMPAS_OBSERVED = ["sex", "age_cat", "c_charge_degree", "priors_count", "decile_score"]
#: Top-level keys of leakage.json that hold a date, a version, a timing or the output path.
DROPPED_KEYS = ("stamp", "date", "privwatch_version", "written", "seconds")
#: Keys whose value is a path given on the command line: only the file name is kept.
PATH_KEYS = ("source",)


#: How far a value computed by float32 torch training may lie from its golden (absolute; the
#: values are log-lifts and epsilons in nats, and mutual information, all of order 0.01-1).
#: Measured by ``benchmarks/hardware_spread.py`` (``benchmarks/results/hardware_spread.json``,
#: 2026-11-27, commit 1512c44): on one 2-core AMD EPYC, ``ATEN_CPU_CAPABILITY`` default / avx2 /
#: unset (AVX-512) with 1 and 2 threads, the streamed route's per-record risks and log-lifts
#: moved by at most 1.16e-7 (every record, ``default`` only; avx2 and AVX-512 gave the golden
#: bit for bit), ``effective_epsilon`` by 2.2e-9 and the mutual information estimate by 2.5e-10;
#: issue #45's Intel Xeon (AVX-512 + AMX) moved ``effective_epsilon`` by 1.2e-8. 1e-6 is about 9x
#: the largest of these (8 float32 ulps at 1.0). A real change of the route's results moves them
#: by far more: with ``--seed 1`` (another fold split and initialisation) ``effective_epsilon``
#: moved by 4.7e-4 and the risks by 0.049 (median; ``benchmarks/hardware_spread_power.py``).
#: Everything else is compared exactly.
FLOAT32_ATOL = 1e-6


@dataclass(frozen=True)
class Case:
    """One golden audit: its command-line arguments (after ``privwatch audit``) and outputs.

    ``args`` receives the folder of the inputs; ``files`` are the output files compared (a
    ``.parquet`` file is compared as a CSV of its rows sorted by the record key ``record``).
    ``float32`` names the values computed by float32 torch training, which the CPU's kernels
    round differently: ``leakage.json`` key paths (``/guarantee/effective_epsilon``) and CSV
    columns (``scores.parquet.csv.gz:risk``), compared within :data:`FLOAT32_ATOL`; every other
    value (counts, flags, released values, texts, float64 results) is compared exactly.
    """

    name: str
    args: Callable[[Path], list[str]]
    files: tuple[str, ...]
    float32: tuple[str, ...] = ()


def _bundled_compas() -> Path:
    """The raw COMPAS file the package ships (7,214 records, all six race values)."""
    return Path(str(resources.files("privwatch.datasets").joinpath("data/compas-two-years.csv.gz")))


def _raw_compas_args(inputs: Path) -> list[str]:
    folder = inputs / "hierarchies"
    hier = [a for c in COMPAS_OBSERVED for a in ("--hierarchy", f"{c}={folder / c}.csv")]
    return [str(_bundled_compas()), "--sensitive", "race", "--observed",
            ",".join(COMPAS_OBSERVED), "--epsilon", "1", *hier]  # fmt: skip


def _engine_args(engine: str) -> Callable[[Path], list[str]]:
    def args(inputs: Path) -> list[str]:
        return [str(inputs / "lake" / "part-*.parquet"), "--engine", engine, "--sensitive", "s",
                "--observed", "a,b,c,d", "--epsilon", "0.5"]  # fmt: skip

    return args


def _stream_args(inputs: Path) -> list[str]:
    return [str(inputs / "stream" / "part-*.parquet"), "--sensitive", "s", "--observed", "x,c",
            "--estimator", "classifier", "--epsilon", "0.3", "--folds", "2"]  # fmt: skip


MEMORY_FILES = ("leakage.json", "release.csv", "scores.csv", "frontier.csv")
ENGINE_FILES = ("leakage.json", "release.parquet", "scores.parquet")
CASES = {
    c.name: c
    for c in (
        Case("bundled_compas", lambda _: ["--dataset", "compas"], MEMORY_FILES),
        Case("raw_compas", _raw_compas_args, MEMORY_FILES),
        Case("parquet_duckdb", _engine_args("duckdb"), ENGINE_FILES),
        Case("parquet_polars", _engine_args("polars"), ENGINE_FILES),
        # The classifier's scores: the flags they give are exact (the nearest golden risk lies
        # 2.7e-4 from the threshold 0.3, 2,000x the measured spread), so flags, counts and the
        # released values are compared exactly.
        Case(
            "stream_neural",
            _stream_args,
            ENGINE_FILES,
            float32=(
                "/guarantee/effective_epsilon",
                "/before/mutual_information_estimate",
                "/mutual_information_estimate",
                # the held-out estimate (#41) is computed from the same float32 risks: under
                # ATEN_CPU_CAPABILITY=default it moved by at most 1.2e-8 (the recalibration's
                # slope), the interval's ends by 1.9e-9
                "/held_out/breach_probability",
                "/held_out/breach_probability_ci[0]",
                "/held_out/breach_probability_ci[1]",
                "/held_out/kept_breach",
                "/held_out/marker_log_lift",
                *(
                    f"/held_out/{k}[{i}]"
                    for k in ("calibration", "calibration_se")
                    for i in range(3)
                ),
                "scores.parquet.csv.gz:risk",
                "scores.parquet.csv.gz:log_lift[0]",
                "scores.parquet.csv.gz:log_lift[1]",
            ),
        ),
    )
}


def run_case(case: Case, out: Path) -> int:
    """Run ``python -m privwatch audit`` for ``case`` into ``out``; its exit status (0 or 3).

    The child inherits the environment (``PYTHONPATH`` picks the code under test) with one
    OpenMP thread: the outputs are the same as with two (checked on the streamed route), and a
    torch trainer with several threads on busy cores ran 20 times slower.
    """
    cmd = [sys.executable, "-m", "privwatch", "audit", *case.args(INPUTS), "--out", str(out), "-q"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # same outputs; no thread thrash on busy cores
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if proc.returncode not in (0, 3):
        raise RuntimeError(f"{case.name}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc.returncode


def _normalise_json(doc: Any, top: bool = True) -> Any:
    """leakage.json without the keys of DROPPED_KEYS (top level) and with paths cut to names."""
    if isinstance(doc, dict):
        out = {}
        for key, value in doc.items():
            if top and key in DROPPED_KEYS:
                continue
            if (key in PATH_KEYS and isinstance(value, str)) or (
                key == "hierarchies" and isinstance(value, dict)
            ):
                value = _names(value)
            out[key] = _normalise_json(value, top=False)
        return out
    if isinstance(doc, list):
        return [_normalise_json(v, top=False) for v in doc]
    return doc


#: Where the one ``leakage.json`` schema (issue 31) keeps what the engine and streamed routes
#: wrote at the top level before: old key -> path in the new document.
MOVED = {
    "engine": {
        "engine_reason": ("route_reason",),
        "source": ("stamp", "input_name"),
        "n_records": ("summary", "n_records"),
        "n_observed_tuples": ("summary", "n_observed_symbols"),
    },
    "stream": {
        "source": ("stamp", "input_name"),
        "n_records": ("summary", "n_records"),
        "sensitive_counts": ("summary", "sensitive_counts"),
        "n_flagged": ("summary", "n_flagged"),
        "mutual_information_estimate": ("before", "mutual_information_estimate"),
    },
}


def as_before(doc: Any) -> Any:
    """A leakage.json of the rebuilt audit in the terms the goldens were written in.

    - keys the engine and streamed routes wrote at the top level are read from where the one
      schema keeps them (:data:`MOVED`); the streamed route was called ``engine-neural``;
    - library messages name parameters in backticks (`max_suppressed`), which the command line
      prints as flags: every string is passed through the CLI's one translation table
      (:func:`privwatch.cli._flags.to_flags`), as the goldens hold the flag form;
    - ``warnings`` are compared as a sorted list (the engine route wrote them sorted).
    A document without ``summary`` on those routes (the old shape) is returned as it is.
    """
    from privwatch.cli._flags import to_flags

    if not isinstance(doc, dict):
        return doc
    route = doc.get("route")
    if route in MOVED and "summary" in doc:
        doc = dict(doc)
        for key, where in MOVED[route].items():
            value: Any = doc
            for part in where:
                value = value[part]
            doc[key] = value
        if route == "stream":
            doc["route"] = "engine-neural"
    doc = _strings(doc, to_flags)
    if isinstance(doc.get("warnings"), list):
        doc["warnings"] = sorted(doc["warnings"], key=lambda w: (w["category"], w["message"]))
    return doc


def _strings(value: Any, f: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return f(value)
    if isinstance(value, dict):
        return {k: _strings(v, f) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, f) for v in value]
    return value


def _names(value: Any) -> Any:
    """A path, or a dict of paths (``settings.hierarchies``), cut to the file names."""
    if isinstance(value, dict):
        return {k: Path(str(v)).name for k, v in value.items()}
    return Path(str(value)).name


def normalised(out: Path, files: tuple[str, ...]) -> dict[str, bytes]:
    """The compared form of each output file, keyed by its golden file name.

    ``leakage.json``: see :func:`_normalise_json`, written with ``indent=2``; CSV files: the
    bytes as written (gzipped in the golden folder); ``release.parquet`` and
    ``scores.parquet``: their rows sorted by the record key ``record`` (an engine writes in its
    scan order), as CSV.
    """
    found: dict[str, bytes] = {}
    for name in files:
        path = out / name
        if not path.is_file():
            raise FileNotFoundError(f"the audit wrote no {name} in {out}")
        if name == "leakage.json":
            doc = _normalise_json(as_before(json.loads(path.read_text())))
            found[name] = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
        elif name.endswith(".parquet"):
            rows = pd.read_parquet(path).sort_values("record", kind="stable")
            found[f"{name}.csv.gz"] = rows.to_csv(index=False, lineterminator="\n").encode()
        else:
            found[f"{name}.gz"] = path.read_bytes()
    return found


def read_golden(case: Case) -> tuple[int, dict[str, bytes]]:
    """The golden exit status and files of ``case`` (CSV files decompressed)."""
    folder = GOLDEN / case.name
    status = int((folder / "exit_status").read_text())
    files = {}
    for path in sorted(folder.iterdir()):
        if path.name == "exit_status":
            continue
        data = path.read_bytes()
        files[path.name] = gzip.decompress(data) if path.suffix == ".gz" else data
    return status, files


def write_golden(case: Case) -> float:
    """Run ``case`` and store its normalised outputs; the seconds it took."""
    folder = GOLDEN / case.name
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        status = run_case(case, Path(tmp) / "out")
        seconds = time.perf_counter() - t0
        files = normalised(Path(tmp) / "out", case.files)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "exit_status").write_text(f"{status}\n")
    for name, data in files.items():
        payload = gzip.compress(data, mtime=0) if name.endswith(".gz") else data
        (folder / name).write_bytes(payload)
    return seconds


def write_inputs() -> None:
    """The Parquet inputs, from fixed seeds: a 20,000-record lake of categorical columns (two
    files, row groups of 4,000) and a 3,000-record lake for the streamed route (two files, row
    groups of 500)."""
    g = np.random.default_rng(31)
    n = 20_000
    s = g.choice(["p", "q", "r"], n, p=[0.5, 0.3, 0.2])
    code = pd.Series(s).map({"p": 0, "q": 1, "r": 2}).to_numpy()
    lake = pd.DataFrame(
        {
            "s": s,
            "a": (code + g.integers(0, 3, n)) % 4,
            "b": g.integers(0, 5, n),
            "c": np.where(g.random(n) < 0.3 + 0.2 * code, "x", g.choice(["y", "z"], n)),
            "d": g.integers(18, 30, n),
        }
    )
    _write_parts(lake, INPUTS / "lake", 12_000, 4_000)
    n = 3_000
    s = g.integers(0, 2, n)
    stream = pd.DataFrame(
        {
            "s": s,
            "x": np.round(0.6 * s + g.normal(0, 1, n), 3),
            "c": np.where(g.random(n) < 0.4 + 0.3 * s, "u", "v"),
        }
    )
    _write_parts(stream, INPUTS / "stream", 1_500, 500)


def _write_parts(frame: pd.DataFrame, folder: Path, split: int, group: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    frame.iloc[:split].to_parquet(folder / "part-0.parquet", index=False, row_group_size=group)
    frame.iloc[split:].to_parquet(folder / "part-1.parquet", index=False, row_group_size=group)


def first_difference(
    name: str, got: bytes, want: bytes, float32: tuple[str, ...] = ()
) -> str | None:
    """None when ``got`` matches the golden ``want``; else where they first differ.

    Values named in ``float32`` (see :class:`Case`) may differ by :data:`FLOAT32_ATOL`."""
    if name == "leakage.json":
        return _json_difference(json.loads(got), json.loads(want), "", float32)
    got_lines, want_lines = got.decode().splitlines(), want.decode().splitlines()
    header = want_lines[0].split(",") if want_lines else []
    close = {j for j, c in enumerate(header) if f"{name}:{c}" in float32}
    for i, (g, w) in enumerate(zip(got_lines, want_lines, strict=False)):
        if g != w:
            gf, wf = g.split(","), w.split(",")
            col = next(
                (
                    j
                    for j, (a, b) in enumerate(zip(gf, wf, strict=False))
                    if a != b and not (i > 0 and j in close and _close(a, b))
                ),
                None,
            )
            if col is None and len(gf) == len(wf):
                continue  # only float32 values, each within FLOAT32_ATOL
            where = f", column {header[col]!r}" if col is not None and col < len(header) else ""
            return f"line {i + 1}{where}: got {g!r}, golden {w!r}"
    if len(got_lines) != len(want_lines):
        return f"{len(got_lines)} lines, golden {len(want_lines)}"
    return None


def _close(got: Any, want: Any) -> bool:
    """Two float32-derived values (numbers or their CSV texts) within :data:`FLOAT32_ATOL`."""
    try:
        a, b = float(got), float(want)
    except (TypeError, ValueError):
        return False
    return (
        isinstance(got, (str, float))
        and type(got) is type(want)
        and (a == b or abs(a - b) <= FLOAT32_ATOL)
    )


def _json_difference(got: Any, want: Any, key: str, float32: tuple[str, ...] = ()) -> str | None:
    """The first golden key whose value differs (keys the code adds beside them are allowed)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{key or '/'}: got {type(got).__name__}, golden an object"
        for k, w in want.items():
            if k not in got:
                return f"{key}/{k}: missing (golden {w!r:.200})"
            found = _json_difference(got[k], w, f"{key}/{k}", float32)
            if found:
                return found
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{key}: got {got!r:.200}, golden {want!r:.200}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            found = _json_difference(g, w, f"{key}[{i}]", float32)
            if found:
                return found
        return None
    same = got == want or (
        isinstance(got, float) and isinstance(want, float) and math.isnan(got) and math.isnan(want)
    )
    if key in float32 and isinstance(want, float) and _close(got, want):
        return None
    return None if same and type(got) is type(want) else f"{key}: got {got!r}, golden {want!r}"


def main(argv: list[str]) -> None:
    """Rewrite the goldens of the named cases (all when none is named)."""
    if "--inputs" in argv:
        write_inputs()
    names = [a for a in argv if not a.startswith("--")] or list(CASES)
    import privwatch

    print(f"privwatch from {Path(privwatch.__file__).parent}")
    for name in names:
        print(f"{name}: {write_golden(CASES[name]):.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
