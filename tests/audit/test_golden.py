"""Golden outputs of ``privwatch audit``: the audit layer's rebuild (issue 31) changes no output.

The goldens were first written by the code of commit e9105e3 (before issue 31), and the rebuilt
audit reproduced them; they were written again after issue 32's deliberate change of the
verdicts (held-out estimator, margins, per-value table, alternative objects), with
``.venv/bin/python -m tests.audit._golden`` (``PYTHONPATH=<commit>/src`` for another commit's
code); running the same command writes them again after a deliberate change of behaviour (say
which in the commit).

Cases (``tests/audit/_golden.py``; each is ``python -m privwatch audit ... --out DIR -q`` in a
child process, default seed, its exit status compared too):

- ``bundled_compas``: ``--dataset compas`` (in memory; epsilon proposed).
- ``raw_compas``: the raw COMPAS file the package ships (7,214 records, all six race values),
  ``--sensitive race``, the five shared ARX hierarchies (copied to ``golden/inputs``),
  ``--epsilon 1``.
- ``parquet_duckdb``, ``parquet_polars``: a 20,000-record Parquet lake (two files, committed
  in ``golden/inputs/lake``) counted and labelled in DuckDB and in Polars, ``--epsilon 0.5``.
- ``stream_neural``: a 3,000-record Parquet lake (two files, row groups of 500) through the
  streamed neural route, ``--estimator classifier --epsilon 0.3 --folds 2``.

Compared: ``leakage.json``; ``release.csv``, ``scores.csv`` and ``frontier.csv`` byte for byte
(in-memory route); ``release.parquet`` and ``scores.parquet`` as CSV of their rows sorted by the
record key ``record`` (engine and streamed routes; an engine writes in its scan order, so the
row order is not compared). Issue #42 split the engine and streamed routes' one
``release.parquet`` (every input column beside ``release_*`` columns and the scores) into these
two files: their goldens were rewritten from the old ones' values, checked equal column by
column (the released values, the record key = the old ``privwatch_row``, every score), with the
source's own columns dropped; ``leakage.json`` was not rewritten.

Exact, except the streamed route's float32 values: ``Case.float32`` in ``_golden.py`` names
them (the classifier's per-record risks and log-lifts, ``effective_epsilon``, the mutual
information estimate and the held-out estimate computed from the risks), compared within
``_golden.FLOAT32_ATOL`` = 1e-6, about 9x the largest
spread measured between PyTorch's CPU kernels (``ATEN_CPU_CAPABILITY`` default / avx2 / native,
1 and 2 threads: 1.2e-7; ``benchmarks/hardware_spread.py``, issue #45). The flags, counts,
released values and exit status of that route are still compared exactly. The other four cases
use no torch and gave their goldens bit for bit under every kernel setting.

The rebuilt audit's ``leakage.json`` is read in the goldens' terms first
(:func:`tests.audit._golden.as_before`: keys the one schema moved, library messages in their
command-line form, warnings sorted). Normalised away in ``leakage.json``: the top-level
``stamp`` (input name, hash, shape, version, date), ``date``, ``privwatch_version``, ``written``
(the output path) and ``seconds`` when present; ``source`` (the path or glob given) and each
path of ``settings.hierarchies`` are cut to their file names. Every other value is compared
exactly, floats included (each case gave bit-identical outputs on two runs on one machine), but
for the float32 values above. Keys the new code adds beside the golden ones are allowed
(issue 31 gives the engine routes' ``leakage.json`` the schema's stamp, settings and summary); a
golden key that is missing or has another value (or type) fails with its path.

Runtime: about 25 s on two idle cores (the streamed route 11 s; 95 s at load 11), so not
``slow``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._golden import CASES, first_difference, normalised, read_golden, run_case


@pytest.mark.parametrize("name", list(CASES))
def test_audit_outputs_equal_the_golden_ones(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    golden_status, golden = read_golden(case)
    status = run_case(case, tmp_path / "out")
    found = normalised(tmp_path / "out", case.files)
    assert sorted(found) == sorted(golden), f"{name}: files {sorted(found)}"
    problems = [
        f"{name}/{file}: {diff}"
        for file in sorted(golden)
        if (diff := first_difference(file, found[file], golden[file], case.float32)) is not None
    ]
    assert not problems, "\n".join(problems)
    assert status == golden_status, f"{name}: exit status {status}, golden {golden_status}"


def test_a_changed_value_is_named_by_file_key_and_row() -> None:
    """The comparison can fail, and says where: the JSON key path and the CSV row and column."""
    golden = b'{"a": {"b": [1.5, 2.0]}, "c": "x"}'
    assert first_difference("leakage.json", golden, golden) is None
    assert first_difference("leakage.json", b'{"a": {"b": [1.5, 2.0]}, "c": "x", "new": 1}',
                            golden) is None  # fmt: skip
    changed = b'{"a": {"b": [1.5, 2.0000000000000004]}, "c": "x"}'
    assert first_difference("leakage.json", changed, golden) == (
        "/a/b[1]: got 2.0000000000000004, golden 2.0"
    )
    assert first_difference("leakage.json", b'{"a": {"b": [1.5, 2.0]}}', golden) == (
        "/c: missing (golden 'x')"
    )
    csv = b"record,risk\n0,0.5\n1,inf\n"
    assert first_difference("scores.csv.gz", csv, csv) is None
    assert first_difference("scores.csv.gz", b"record,risk\n0,0.5\n1,0.7\n", csv) == (
        "line 3, column 'risk': got '1,0.7', golden '1,inf'"
    )
    assert first_difference("scores.csv.gz", csv + b"2,0.1\n", csv) == "4 lines, golden 3"


def test_float32_values_get_the_measured_tolerance_and_nothing_else_does() -> None:
    """Only the named float32 values may move, and by at most FLOAT32_ATOL (1e-6)."""
    names = ("/e", "scores.parquet.csv.gz:risk")
    golden = b'{"e": 0.29950522527039336, "n": 1876, "x": 0.5}'
    moved = b'{"e": 0.2995052132459142, "n": 1876, "x": 0.5}'  # issue #45's other CPU
    assert first_difference("leakage.json", moved, golden, names) is None
    assert first_difference("leakage.json", moved, golden) == (
        "/e: got 0.2995052132459142, golden 0.29950522527039336"
    )
    assert first_difference("leakage.json", b'{"e": 0.2995072, "n": 1876, "x": 0.5}', golden,
                            names) == "/e: got 0.2995072, golden 0.29950522527039336"  # fmt: skip
    assert first_difference("leakage.json", b'{"e": 0.29950522527039336, "n": 1877, "x": 0.5}',
                            golden, names) == "/n: got 1877, golden 1876"  # fmt: skip
    other = b'{"e": 0.29950522527039336, "n": 1876, "x": 0.5000001}'  # not named: exact
    assert first_difference("leakage.json", other, golden, names) == "/x: got 0.5000001, golden 0.5"
    file = "scores.parquet.csv.gz"
    csv = b"row,risk,flagged\n0,0.0671342398204039,False\n1,0.3780828413039646,True\n"
    near = b"row,risk,flagged\n0,0.06713424358280709,False\n1,0.3780828413039646,True\n"
    assert first_difference(file, near, csv, names) is None
    assert first_difference(file, near, csv) is not None
    far = b"row,risk,flagged\n0,0.0671362,False\n1,0.3780828413039646,True\n"
    assert first_difference(file, far, csv, names) == (
        "line 2, column 'risk': got '0,0.0671362,False', golden '0,0.0671342398204039,False'"
    )
    flipped = b"row,risk,flagged\n0,0.06713424358280709,True\n1,0.3780828413039646,True\n"
    assert first_difference(file, flipped, csv, names) == (
        "line 2, column 'flagged': got '0,0.06713424358280709,True', "
        "golden '0,0.0671342398204039,False'"
    )
