"""The randomized release (#41 part B): the LP channel meets every lift constraint and keeps at
least the merge's objective; its held-out verdict agrees with the truth of a known pmf; the
saved channel applies reproducibly with a seed and a tampered file is refused; the audit method
runs through the seam."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privwatch as pw
from privwatch.audit import METHODS
from privwatch.exceptions import TamperedFileError, ValidationError
from privwatch.mechanisms import (
    lift_channel,
    lift_channel_refuses,
    release_information,
    symbol_log_lift,
)
from privwatch.release.randomized import (
    RandomizedMechanism,
    channel_weights,
    randomize_release,
)


def _flags(p: np.ndarray, eps: float, disclosure: str) -> np.ndarray:
    ps, px = p.sum(1), p.sum(0)
    with np.errstate(divide="ignore"):
        lift = np.log(p / px / ps[:, None])
    return np.asarray((np.abs(lift) if disclosure == "both" else lift).max(0) > eps)


@pytest.mark.parametrize("disclosure", ["both", "positive"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_channel_meets_every_lift_constraint_and_beats_the_merge_objective(
    disclosure: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(3 * 25, 0.4)).reshape(3, 25)
    eps = 0.5
    flagged = _flags(p, eps, disclosure)
    ch = lift_channel(p, flagged, eps, disclosure)
    assert np.allclose(ch.channel.sum(1), 1.0) and (ch.channel >= 0).all()
    # every released symbol's lift, recomputed from the channel, is within the box
    lifts = symbol_log_lift(p, ch.inputs, ch.channel, disclosure)
    assert np.nanmax(lifts) <= eps + 1e-9
    assert ch.worst_log_lift <= eps + 1e-9
    ps = p.sum(1)
    mass = p[:, ch.inputs] @ ch.channel
    post = mass[:, mass.sum(0) > 0] / mass.sum(0)[mass.sum(0) > 0]
    assert (post <= np.exp(eps) * ps[:, None] * (1 + 1e-9)).all()
    if disclosure == "both":
        assert (post >= np.exp(-eps) * ps[:, None] * (1 - 1e-9)).all()
    # the merge (k[x, *] = 1) has objective 0: the LP keeps at least that
    assert ch.objective >= 0.0
    if ch.merge_feasible:
        merged = release_information(p.sum(0), np.flatnonzero(flagged), np.ones((flagged.sum(), 1)))
        assert ch.merge_information_nats == pytest.approx(merged)
        assert ch.moved_unflagged == 0


def test_safe_tuples_join_the_marker_when_the_merge_breaks_epsilon() -> None:
    # one-sided: the flagged tuples, merged, still break epsilon; safe tuples may join '*'
    p = np.array([[0.172, 0.369, 0.2, 0.0], [0.138, 0.004, 0.065, 0.052]])
    p = p / p.sum()
    flagged = _flags(p, 0.3, "positive")
    ch = lift_channel(p, flagged, 0.3, "positive")
    assert not ch.merge_feasible and ch.merge_information_nats is None
    assert ch.moved_unflagged == 2 and ch.beats_merge is None
    assert ch.worst_log_lift <= 0.3 + 1e-9


def test_an_lp_over_more_tuples_than_it_is_solved_for_is_refused_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a census-like table flags every unique tuple: 25,189 of them made HiGHS run for hours
    from privwatch.mechanisms import _lift_channel

    p = np.random.default_rng(0).dirichlet(np.ones(60), size=2)
    flagged = _flags(p / p.sum(), 0.05, "both")
    assert flagged.sum() > 20
    assert lift_channel(p / p.sum(), flagged, 0.05).worst_log_lift <= 0.05 + 1e-9
    monkeypatch.setattr(_lift_channel, "MAX_TUPLES", 20)
    assert lift_channel_refuses(21) and not lift_channel_refuses(20)
    with pytest.raises(ValidationError, match=r"more than the 20 it is solved for"):
        lift_channel(p / p.sum(), flagged, 0.05)


def _known_pmf(seed: int) -> tuple[np.ndarray, list[tuple[str, str]]]:
    rng = np.random.default_rng(seed)
    cells = [(a, b) for a in "abcdefgh" for b in "pqrstu"]
    px = rng.dirichlet(np.full(len(cells), 2.0))
    share = np.clip(0.35 + rng.normal(0, 0.12, len(cells)), 0.02, 0.98)
    return np.stack([px * share, px * (1 - share)]), cells


def _draw(p: np.ndarray, cells: list[tuple[str, str]], n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    flat = rng.choice(p.size, n, p=p.ravel())
    s, x = np.divmod(flat, p.shape[1])
    return pd.DataFrame(
        {"s": np.where(s == 0, "yes", "no"), "a": [cells[i][0] for i in x],
         "b": [cells[i][1] for i in x]}
    )  # fmt: skip


def _true_breach(done, p: np.ndarray, cells: list[tuple[str, str]]) -> float:  # type: ignore[no-untyped-def]
    """The population share in a released symbol breaking epsilon, from the known pmf."""
    index = {f"{a}|{b}": j for j, (a, b) in enumerate(cells)}
    order = [index[f"{a}|{b}"] for a, b in done.tuples.astype(str).to_numpy()]
    sens = [v[0] for v in done.table.sensitive_values]
    rows = [0 if v == "yes" else 1 for v in sens]
    pt = p[np.ix_(rows, order)]  # p[s, tuple row]
    unseen = np.setdiff1d(np.arange(p.shape[1]), order)
    w, star = channel_weights(done.channel, len(order))
    mass = (pt @ w.toarray()).copy()  # (s, symbols)
    mass[:, star] += p[np.ix_(rows, unseen)].sum(1)
    ps = p[rows].sum(1)
    live = mass.sum(0) > 0
    post = mass[:, live] / mass[:, live].sum(0)
    lift = np.log(post / ps[:, None])
    lift = np.abs(lift) if done.disclosure == "both" else lift
    breaks = lift.max(0) > done.epsilon
    return float(mass[:, live].sum(0)[breaks].sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_the_held_out_verdict_agrees_with_the_truth_of_a_known_pmf(seed: int) -> None:
    p, cells = _known_pmf(seed)
    frame = _draw(p, cells, 4000, seed + 10)
    done = randomize_release(frame, "s", ["a", "b"], 0.5, folds=5, seed=seed)
    truth = _true_breach(done, p, cells)
    held = done.held_out
    assert held is not None
    lo, hi = held.breach_probability_ci
    assert lo - 0.02 <= truth <= hi + 0.02  # the interval (a little slack: 2 seeds only)
    if done.verdict == "met":
        assert truth <= 2 * done.tolerance  # never MET where the truth is twice the tolerance
    assert done.channel.worst_log_lift <= 0.5 + 1e-9


def test_save_apply_is_reproducible_with_a_seed_and_a_tampered_file_is_refused(
    tmp_path: Path,
) -> None:
    p, cells = _known_pmf(3)
    frame = _draw(p, cells, 2000, 4)
    done = randomize_release(frame, "s", ["a", "b"], 0.5, folds=0, seed=0)
    assert len(done.channel.inputs) > 0
    path = RandomizedMechanism.from_release(done).save(tmp_path / "m.json")
    mech = RandomizedMechanism.load(path)
    first, again = mech.apply(frame, 7), mech.apply(frame, 7)
    pd.testing.assert_frame_equal(first, again)
    assert not first.equals(mech.apply(frame, 8))
    # records of tuples released as themselves are unchanged; an unseen tuple becomes '*'
    kept = ~np.isin(done.record_tuple, done.channel.inputs)
    assert (first[kept].to_numpy() == frame[["a", "b"]][kept].to_numpy()).all()
    new = pd.DataFrame({"a": ["zz"], "b": ["p"]})
    assert (mech.apply(new, 0).to_numpy() == "*").all()
    doc = json.loads(path.read_text())
    doc["state"]["epsilon"] = 5.0
    path.write_text(json.dumps(doc))
    with pytest.raises(TamperedFileError, match="SHA-256"):
        RandomizedMechanism.load(path)


def test_the_audit_method_releases_through_the_seam() -> None:
    p, cells = _known_pmf(5)
    frame = _draw(p, cells, 3000, 6)
    result = pw.audit.run(
        source=frame, sensitive="s", epsilon=1.0, checks=False, method="randomized"
    )
    assert result.release_method is METHODS["randomized"]
    held = result.leakage["held_out"]
    assert (held["breach_probability_ci"][1] <= 0.05) == (held["verdict"] == "met")
    assert result.leakage["utility"]["information_nats"] > 0
    labels = dict(result.rows())
    assert "information kept, I(X; Y)" in labels and "held-out breach probability" in labels
    assert isinstance(result.mechanism(), RandomizedMechanism)


def test_privwatch_apply_draws_a_saved_channel_with_its_seed(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from privwatch.cli import app

    p, cells = _known_pmf(3)
    frame = _draw(p, cells, 2000, 4)
    done = randomize_release(frame, "s", ["a", "b"], 0.5, folds=0, seed=0)
    path = RandomizedMechanism.from_release(done).save(tmp_path / "m.json")
    frame.to_csv(tmp_path / "new.csv", index=False)
    runs = []
    for name in ("one", "two"):
        res = CliRunner().invoke(
            app, ["apply", str(path), str(tmp_path / "new.csv"), "--out", str(tmp_path / name),
                  "--seed", "5"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        runs.append((tmp_path / name / "release.csv").read_text())
    assert runs[0] == runs[1]
    summary = json.loads((tmp_path / "one" / "apply.json").read_text())
    assert summary["kind"] == "RandomizedChannel" and summary["seed"] == 5
    doc = json.loads(path.read_text())
    doc["state"]["epsilon"] = 9.0
    path.write_text(json.dumps(doc))
    res = CliRunner().invoke(
        app, ["apply", str(path), str(tmp_path / "new.csv"), "--out", str(tmp_path / "bad")]
    )
    assert res.exit_code != 0 and "SHA-256" in res.output
