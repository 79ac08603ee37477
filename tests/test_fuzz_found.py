"""What the CLI fuzzing of check and apply found (issue #40), pinned at the library layer where
Python callers meet it too. The CLI cases themselves are in tests/test_fuzz_cli.py (their ids are
named in each test here)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privwatch.audit import AuditSpec, run
from privwatch.check import check
from privwatch.engines import fold_of, read_table
from privwatch.exceptions import TamperedFileError, ValidationError
from privwatch.release import Generalisation, find_release
from privwatch.release.generalisation import apply_saved_mechanism


def _table(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, n)
    return pd.DataFrame({"s": s, "a": ((s + rng.integers(0, 2, n)) % 3).astype(str),
                         "b": rng.integers(0, 3, n).astype(str)})  # fmt: skip


@pytest.mark.parametrize("sep", ["", "ab", "\n", '"'])
def test_a_separator_is_one_character(tmp_path: Path, sep: str) -> None:
    """check[--sep=''], apply[--sep='zzz']: csv's raw TypeError."""
    path = tmp_path / "t.csv"
    _table().to_csv(path, index=False)
    with pytest.raises(ValidationError, match="`sep` must be one character"):
        read_table(path, sep=sep)


def test_folds_beyond_the_fold_hash_are_refused() -> None:
    """check[--folds='99999999999999999999']: an OverflowError in the fold hash."""
    with pytest.raises(ValidationError, match=r"`folds` must be an integer in \[2, 2\*\*31\)"):
        fold_of([0, 1, 2], 10**20)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sensitive": "s", "observed": "a,a"}, "`observed` must name each column once"),
        ({"sensitive": "a,b", "observed": "a,b"}, "`observed` must not contain a sensitive"),
        ({"sensitive": "s,s"}, "`sensitive` must name each column once"),
    ],
)
def test_columns_named_twice_or_on_both_sides_are_refused(
    options: dict[str, str], message: str
) -> None:
    """audit[--observed='a,a'], check[--observed='a,a'], audit[--sensitive='a,b']: raw pandas
    errors (a Series' ambiguous truth value, overlapping merge columns, factorize of a frame)."""
    with pytest.raises(ValidationError, match=message):
        AuditSpec(**options)  # type: ignore[arg-type]


def test_an_empty_useful_column_is_a_missing_column() -> None:
    """audit[--useful='']: a raw KeyError ''."""
    with pytest.raises(ValidationError, match=r"columns \[''\] are not in the data"):
        find_release(_table(), "s", ["a", "b"], epsilon=1.0, useful="", folds=0)


def test_synthetic_check_with_a_control_set_writes_its_report(tmp_path: Path) -> None:
    """check-synthetic[--epsilon='1e308'] and every valid synthetic case with --control: the
    report's attack section read `control_unseen_tuples`, which the synthetic check did not
    write (a jinja2 TypeError after the check, and an empty folder left behind)."""
    from privwatch.report import write_audit

    table = _table()
    synthetic = table.sample(60, replace=True, random_state=1)
    control = table.sample(60, replace=True, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = check(table, synthetic, sensitive="s", synthetic=True, control=control)
    attack = result.leakage["attack"]
    assert 0 <= attack["control_unseen_tuples"] <= 60
    write_audit(result, tmp_path / "out")
    assert "control records had values never seen" in (tmp_path / "out/report.html").read_text()
    with pytest.raises(ValidationError, match="`control` must hold the sensitive column 's'"):
        check(table, synthetic, sensitive="s", synthetic=True, control=control[["a", "b"]])


def test_a_mechanism_error_names_the_mechanism_and_save_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    """apply-mechanism (malformed files): the message named `path`, printed as DATA; audit
    [--save-mechanism='adir']: a folder at the path left M.json's temporary file behind."""
    bad = tmp_path / "m.json"
    bad.write_text("{not json")
    (tmp_path / "new.csv").write_text("a,b\n1,2\n")
    with pytest.raises(TamperedFileError, match="`mechanism` must be an intact privwatch model"):
        apply_saved_mechanism(bad, tmp_path / "new.csv", tmp_path / "out")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mechanism = run(source=_table(), sensitive="s", folds=0, checks=False).generalisation()
    (tmp_path / "adir").mkdir()
    with pytest.raises(OSError):
        mechanism.save(tmp_path / "adir")
    assert not (tmp_path / "adir.tmp").exists()
    assert isinstance(Generalisation.load(mechanism.save(tmp_path / "ok.json")), Generalisation)
