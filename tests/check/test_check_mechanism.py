"""`privwatch check --mechanism` (#41 item 4): a randomized release judged against the channel it
was drawn from gives the audit's held-out verdict, figures and information exactly, whatever the
draw; a release drawn from another channel or edited by hand is refused as inconsistent, and so
is a tampered mechanism file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import privwatch as pw
from privwatch.check import check
from privwatch.cli import app
from privwatch.datasets import load_compas
from privwatch.exceptions import ValidationError
from privwatch.release.generalisation import apply_saved_mechanism
from privwatch.release.randomized import RandomizedMechanism

runner = CliRunner()


def _audit(folder: Path, epsilon: float) -> tuple[Any, Path]:
    result = pw.audit.run(source=pw.audit.Bundled("compas"), epsilon=epsilon,
                          method="randomized", checks=False)  # fmt: skip
    return result, result.mechanism().save(folder / f"m{epsilon:g}.json")


@pytest.fixture(scope="module")
def compas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("mechanism")
    original = folder / "compas.csv"
    load_compas().to_csv(original, index=False)
    result, mech = _audit(folder, 1.0)
    applied = apply_saved_mechanism(mech, original, folder / "applied", seed=3)
    return {"folder": folder, "original": original, "audit": result, "mechanism": mech,
            "release": applied.out / "release.csv"}  # fmt: skip


def _check(c: dict[str, Any], release: Path, out: Path, *extra: str) -> Any:
    args = ["check", str(c["original"]), str(release), "--mechanism", str(c["mechanism"]),
            "--key", "record", "--no-checks", "--quiet", "--out", str(out), *extra]  # fmt: skip
    return runner.invoke(app, args)


def test_the_check_of_an_applied_release_gives_the_audits_verdict_and_figures(
    compas: dict[str, Any], tmp_path: Path
) -> None:
    audit = compas["audit"].leakage
    res = _check(compas, compas["release"], tmp_path / "c")
    assert res.exit_code == (0 if audit["status"] == "met" else 3), res.output
    c = json.loads((tmp_path / "c" / "leakage.json").read_text())
    assert c["status"] == audit["status"] == "met"
    assert c["held_out"]["verdict"] == audit["held_out"]["verdict"] == "met"
    assert c["held_out"]["breach_probability"] == pytest.approx(
        audit["held_out"]["breach_probability"], abs=1e-12
    )
    for x, y in zip(c["held_out"]["breach_probability_ci"],
                    audit["held_out"]["breach_probability_ci"], strict=True):  # fmt: skip
        assert x == pytest.approx(y, abs=1e-12)
    assert c["utility"]["information_nats"] == pytest.approx(
        audit["utility"]["information_nats"], rel=1e-9
    )
    rel, arel = c["release"], audit["release"]
    for key in ("flagged_tuples", "flagged_records", "altered_records"):
        assert rel[key] == arel[key], key
    assert rel["merge_information_nats"] == pytest.approx(arel["merge_information_nats"], rel=1e-9)
    assert rel["worst_log_lift_in_sample"] == pytest.approx(
        arel["worst_log_lift_in_sample"], abs=1e-9
    )
    assert c["guarantee"]["per_value"] == audit["guarantee"]["per_value"]
    assert c["check"]["kind"] == "mechanism" and c["check"]["consistent_records"] == 5278
    assert c["check"]["mechanism_kind"] == "RandomizedChannel"


def test_the_figures_are_the_channels_not_the_draws(compas: dict[str, Any]) -> None:
    figures = []
    for seed in (3, 11):
        out = compas["folder"] / f"draw{seed}"
        applied = apply_saved_mechanism(compas["mechanism"], compas["original"], out, seed=seed,
                                        overwrite=True)  # fmt: skip
        mech = RandomizedMechanism.load(compas["mechanism"])  # an object is accepted too
        result = check(compas["original"], applied.out / "release.csv", key="record",
                       mechanism=mech, checks=False)  # fmt: skip
        leak = result.leakage
        figures.append((leak["held_out"]["breach_probability_ci"],
                        leak["utility"]["information_nats"], result.satisfied))  # fmt: skip
    assert figures[0] == figures[1]


def test_a_release_drawn_from_another_channel_is_refused(
    compas: dict[str, Any], tmp_path: Path
) -> None:
    _, other = _audit(tmp_path, 0.5)
    applied = apply_saved_mechanism(other, compas["original"], tmp_path / "other", seed=3)
    res = _check(compas, applied.out / "release.csv", tmp_path / "c")
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "not consistent with the mechanism" in lines[0], res.output
    assert not (tmp_path / "c").exists()


def test_a_release_edited_by_hand_is_refused(compas: dict[str, Any], tmp_path: Path) -> None:
    rel = pd.read_csv(compas["release"], dtype=str)
    kept = compas["audit"].scores["flagged"].to_numpy()
    i = int(np.flatnonzero(~kept)[0])  # a record the channel releases as itself
    rel.loc[i, "sex"] = "Female" if rel.loc[i, "sex"] == "Male" else "Male"
    rel.to_csv(tmp_path / "edited.csv", index=False)
    with pytest.raises(ValidationError, match=r"1 of 5,278 records .*\(first: record "):
        check(compas["original"], tmp_path / "edited.csv", key="record",
              mechanism=compas["mechanism"], checks=False)  # fmt: skip
    rel = pd.read_csv(compas["release"], dtype=str).drop(index=[0, 1])  # records left out
    rel.to_csv(tmp_path / "dropped.csv", index=False)
    res = _check(compas, tmp_path / "dropped.csv", tmp_path / "c")
    assert res.exit_code == 2 and "2 not listed" in res.output, res.output


def test_a_tampered_or_foreign_mechanism_is_refused(compas: dict[str, Any], tmp_path: Path) -> None:
    doc = json.loads(Path(compas["mechanism"]).read_text())
    doc["state"]["epsilon"] = 5.0
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(doc))
    for mech, words in ((bad, "SHA-256"), (compas["original"], "mechanism")):
        args = ["check", str(compas["original"]), str(compas["release"]), "--mechanism",
                str(mech), "--key", "record", "--out", str(tmp_path / "c")]  # fmt: skip
        res = runner.invoke(app, args)
        lines = [line for line in res.output.splitlines() if line.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and words in lines[0], res.output
        assert lines[0].startswith("error:") and not (tmp_path / "c").exists()


def test_a_saved_generalisation_is_judged_as_a_deterministic_map(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 600
    s = rng.integers(0, 2, n)
    frame = pd.DataFrame({"s": s, "a": ((s + rng.integers(0, 3, n)) % 4).astype(str),
                          "b": rng.integers(0, 3, n).astype(str)})  # fmt: skip
    frame.to_csv(tmp_path / "orig.csv", index=False)
    result = pw.audit.run(source=frame, sensitive="s", epsilon=1.0, checks=False)
    mech = result.generalisation().save(tmp_path / "g.json")
    applied = apply_saved_mechanism(mech, tmp_path / "orig.csv", tmp_path / "applied")
    judged = check(tmp_path / "orig.csv", applied.out / "release.csv", key="record",
                   mechanism=mech, checks=False)  # fmt: skip
    assert judged.details["check"]["mechanism_kind"] == "Generalisation"
    assert judged.satisfied == result.satisfied
    assert judged.leakage["guarantee"]["per_value"] == result.leakage["guarantee"]["per_value"]
    info = judged.leakage["utility"]["information_nats"]
    assert info == pytest.approx(result.leakage["utility"]["information_nats"], rel=1e-9)
