"""``privwatch audit`` and its files: input formats (CSV separator and encoding, Excel, JSON
Lines, Parquet), --config, --overwrite, interruptions, row numbers after --missing drop, --bins
before the identifier check, the near-identifier warning, --quiet/--json, and --save-mechanism +
privwatch apply."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner, Result

from privwatch.cli import app
from privwatch.report import OUTPUT_FILES

from ._verdicts import assert_verdict_consistent

runner = CliRunner()


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    return pd.DataFrame(
        {
            "s": np.where(s == 1, "oui", "non"),
            "a": np.where(rng.random(n) < 0.3 + 0.4 * s, "élevé", "bas"),
            "b": rng.integers(0, 3, n),
        }
    )


def _run(*args: str) -> Result:
    return runner.invoke(app, list(args))


def test_csv_sep_and_encoding(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    _table().to_csv(path, sep=";", index=False, encoding="latin-1")
    res = _run("audit", str(path), "--sensitive", "s", "--out", str(tmp_path / "o"))
    assert res.exit_code == 2
    err = res.stderr
    assert "the encoding 'utf-8' cannot decode at offset" in err and "--encoding" in err
    res = _run(
        "audit",
        str(path),
        "--sensitive",
        "s",
        "--sep",
        ";",
        "--encoding",
        "latin-1",
        "--out",
        str(tmp_path / "o"),
        "--quiet",
    )
    assert res.stdout == ""  # --quiet prints only errors, whatever the verdict
    leak = json.loads((tmp_path / "o" / "leakage.json").read_text())
    assert_verdict_consistent(leak, res.exit_code)
    assert leak["summary"]["sensitive_counts"].keys() == {"oui", "non"}
    assert "élevé" in (tmp_path / "o" / "release.csv").read_text(encoding="utf-8")
    res = _run(
        "audit",
        str(path),
        "--sensitive",
        "s",
        "--encoding",
        "klingon",
        "--out",
        str(tmp_path / "o2"),
    )
    # the library names the parameter (`encoding`), the command line its flag
    assert "--encoding must be an encoding Python knows" in res.stderr and "klingon" in res.stderr
    assert "`" not in res.stderr


@pytest.mark.parametrize("suffix", [".xlsx", ".jsonl", ".parquet"])
def test_excel_jsonl_parquet(tmp_path: Path, suffix: str) -> None:
    frame = _table(200)
    path = tmp_path / f"d{suffix}"
    if suffix == ".xlsx":
        frame.to_excel(path, index=False)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        frame.to_parquet(path)
    out = tmp_path / "o"
    res = _run("audit", str(path), "--sensitive", "s", "--out", str(out), "--json")
    doc = json.loads(res.stdout)
    leak = json.loads((out / "leakage.json").read_text())
    assert doc["n_records"] == 200 and doc["status"] == assert_verdict_consistent(
        leak, res.exit_code
    )
    assert set(doc["files"]) == set(OUTPUT_FILES)


def test_config_file_carries_options_and_command_line_wins(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    _table().to_csv(data, index=False)
    cfg = tmp_path / "audit.toml"
    cfg.write_text(
        'data = "d.csv"\nsensitive = "s"\nobserved = ["a", "b"]\nepsilon = 0.3\n'
        'max-suppressed = 0.1\nfolds = 3\nout = "cfg-out"\n'
    )
    res = _run("audit", "--config", str(cfg), "--epsilon", "0.25")
    leak = json.loads((tmp_path / "cfg-out" / "leakage.json").read_text())
    assert_verdict_consistent(leak, res.exit_code)
    assert leak["settings"]["epsilon"] == 0.25  # the command line wins
    assert leak["settings"]["max_suppressed"] == 0.1 and leak["settings"]["folds"] == 3
    bad = tmp_path / "bad.toml"
    bad.write_text('sensitive = "s"\nepsilonn = 1\n')
    res = _run("audit", str(data), "--config", str(bad), "--out", str(tmp_path / "o3"))
    assert res.exit_code == 2
    assert "got unknown ['epsilonn']" in res.stderr


def test_out_refuses_non_empty_folder_unless_overwrite(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    _table().to_csv(data, index=False)
    out = tmp_path / "o"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    stale = out / f"{STAGING}abc"
    stale.mkdir()
    (stale / "half.csv").write_text("x")
    res = _run("audit", str(data), "--sensitive", "s", "--out", str(out))
    assert res.exit_code == 2
    assert "pass --overwrite" in res.stderr
    assert not stale.exists()  # stale staging folders are cleaned at start
    res = _run("audit", str(data), "--sensitive", "s", "--out", str(out), "--overwrite", "-q")
    assert_verdict_consistent(json.loads((out / "leakage.json").read_text()), res.exit_code)
    assert (out / "mine.txt").read_text() == "keep me" and (out / "report.html").exists()


STAGING = ".privwatch-staging-"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interruption_leaves_nothing_half_written(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "privwatch", "audit", "--dataset", "compas", "--out", str(out)]
    for delay in (1.0, 3.0, 5.0):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(delay)
        proc.send_signal(sig)
        proc.communicate(timeout=120)
        assert proc.returncode != 0 or (out / "report.html").exists()
        assert not list(out.glob(f"{STAGING}*")), delay
        if (out / "report.html").exists():
            assert {p.name for p in out.iterdir()} == set(OUTPUT_FILES)
        for p in out.iterdir() if out.exists() else []:
            p.unlink()


def test_missing_drop_keeps_input_row_numbers(tmp_path: Path) -> None:
    frame = _table().assign(a=lambda d: d["a"].where(d.index % 7 > 0))
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "o"
    res = _run("audit", str(data), "--sensitive", "s", "--missing", "drop", "--out", str(out))
    assert_verdict_consistent(json.loads((out / "leakage.json").read_text()), res.exit_code)
    kept = frame["a"].notna().to_numpy()
    for name in ("scores.csv", "release.csv"):
        # one row per input record, in input order, the dropped ones marked (issue 32)
        table = pd.read_csv(out / name)
        np.testing.assert_array_equal(table["record"].to_numpy(), np.arange(len(frame)))
        np.testing.assert_array_equal(~table["dropped_missing"].to_numpy(dtype=bool), kept)
    release = pd.read_csv(out / "release.csv", dtype=str).set_index("record")
    # joining back on the row number finds each record's own observed values (b is released
    # unchanged or suppressed)
    b = release["b"][kept]
    same = b == frame["b"].astype(str)[kept].to_numpy()
    assert (same | (b == "*")).all()


def test_bins_rescue_a_continuous_column_and_near_identifier_warns(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    frame = _table().assign(
        income=rng.normal(3000, 800, 400).round(2), weight=rng.integers(0, 3000, 400)
    )
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    args = ["audit", str(data), "--sensitive", "s", "--observed", "a,income"]
    # without bins: nested quantile intervals built from the data (issue 32)
    res = _run(*args, "--out", str(tmp_path / "o1"))
    leak = json.loads((tmp_path / "o1" / "leakage.json").read_text())
    assert_verdict_consistent(leak, res.exit_code)
    assert leak["settings"]["hierarchies"]["income"].startswith("automatic")
    res = _run(*args, "--bins", "income=4", "--out", str(tmp_path / "o2"))
    leak = json.loads((tmp_path / "o2" / "leakage.json").read_text())
    assert_verdict_consistent(leak, res.exit_code)
    # four quantile bins (three cut points), no automatic hierarchy
    assert len(leak["settings"]["bins"]["income"]) == 3 and not leak["settings"]["hierarchies"]
    res = _run(
        "audit",
        str(data),
        "--sensitive",
        "s",
        "--observed",
        "a,weight",
        "--max-levels",
        "1000",
        "--out",
        str(tmp_path / "o3"),
    )
    # a near-identifier leaks: the release may not meet the guarantee (exit 3), but it runs
    assert "'weight' has a distinct value in" in res.stderr
    leak = json.loads((tmp_path / "o3" / "leakage.json").read_text())
    assert_verdict_consistent(leak, res.exit_code)
    assert any("'weight'" in w["message"] for w in leak["warnings"])
    assert "nearly an identifier" in (tmp_path / "o3" / "report.html").read_text()


def test_save_mechanism_and_apply_to_new_batch(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    frame = _table(600).assign(age=rng.integers(18, 90, 600))
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    mech = tmp_path / "M.json"
    out = tmp_path / "o"
    res = _run(
        "audit",
        str(data),
        "--sensitive",
        "s",
        "--bins",
        "age=4",
        "--epsilon",
        "0.3",
        "--out",
        str(out),
        "--save-mechanism",
        str(mech),
        "-q",
    )
    assert_verdict_consistent(json.loads((out / "leakage.json").read_text()), res.exit_code)
    doc = json.loads(mech.read_text())  # plain JSON, no pickle, checksummed
    assert doc["kind"] == "Generalisation" and len(doc["state_sha256"]) == 64
    assert doc["state"]["format"] == "privwatch-generalisation" and "age" in doc["state"]["bins"]
    # the same records through the saved mechanism give the audit's release
    res = _run("apply", str(mech), str(data), "--out", str(tmp_path / "a1"))
    assert res.exit_code == 0, res.output
    applied = pd.read_csv(tmp_path / "a1" / "release.csv", dtype=str, keep_default_na=False)
    audited = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(applied[audited.columns], audited)
    assert (applied["unseen"] == "False").all()
    # a new batch with a value never seen at fit time: that record is suppressed to '*'
    new = frame.head(5).copy()
    new.loc[new.index[0], "a"] = "inconnu"
    new_path = tmp_path / "new.csv"
    new.to_csv(new_path, index=False)
    res = _run("apply", str(mech), str(new_path), "--out", str(tmp_path / "a2"), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_unseen"] == 1
    rel = pd.read_csv(tmp_path / "a2" / "release.csv", dtype=str, keep_default_na=False)
    assert (rel.loc[0, ["a", "b", "age"]] == "*").all() and rel.loc[0, "unseen"] == "True"
    assert (
        rel.loc[1:, ["a", "b", "age"]].to_numpy() == audited.loc[1:4, ["a", "b", "age"]].to_numpy()
    ).all()
    # a file that is not a mechanism
    res = _run("apply", str(data), str(new_path), "--out", str(tmp_path / "a3"))
    assert res.exit_code == 2
    assert "must be an intact privwatch model file" in res.stderr
