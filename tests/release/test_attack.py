"""inference_attack: guesses by hand, Wilson intervals, the risk, the Bayes attacker."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from privwatch.exceptions import ValidationError
from privwatch.release import bayes_attack_success, inference_attack, wilson_interval

RELEASED = pd.DataFrame(
    {
        "age": ["<40"] * 5 + [">=40"] * 5 + ["*"] * 2,
        "sex": ["f"] * 5 + ["m"] * 5 + ["*"] * 2,
        "dx": ["a", "a", "a", "b", "c", "b", "b", "c", "c", "c", "c", "b"],
    }
)
QIS = ["age", "sex"]


def test_guesses_by_hand() -> None:
    # cells: (<40, f) -> a (3 of 5); (>=40, m) -> c (3 of 5); (*, *) -> c or b (tie, rng)
    targets = RELEASED.iloc[:10]  # hits: 3 + 3
    control = pd.DataFrame(
        {
            "age": ["<40", ">=40", "<40", "?"],
            "sex": ["f", "m", "m", "?"],
            "dx": ["a", "b", "c", "c"],
        }
    )
    r = inference_attack(RELEASED, targets, control, QIS, "dx", rng=0)
    assert (r.n_success_targets, r.n_targets) == (6, 10)
    # control: a hit; b missed (c guessed); two unmatched cells get the overall mode c (5 of 12)
    assert (r.n_success_control, r.n_control, r.control_unmatched) == (3, 4, 2)
    assert r.targets_unmatched == 0
    assert r.success_targets == pytest.approx(0.6)
    assert r.baseline_success == pytest.approx(0.4)  # c for everyone: 4 of the 10 targets


def test_ties_are_broken_by_rng_once_per_cell() -> None:
    targets = pd.concat([RELEASED.iloc[10:]] * 50, ignore_index=True)  # 50 c, 50 b in a tie
    hits = {
        inference_attack(RELEASED, targets, targets, QIS, "dx", rng=s).n_success_targets
        for s in range(20)
    }
    assert hits == {50}  # one guess for the whole cell: always exactly half right
    a = inference_attack(RELEASED, targets, RELEASED, QIS, "dx", rng=3)
    b = inference_attack(RELEASED, targets, RELEASED, QIS, "dx", rng=3)
    assert a == b


def test_wilson_against_the_textbook_form() -> None:
    for n_s, n, level in [(0, 10, 0.95), (7, 10, 0.9), (430, 1000, 0.95), (20, 20, 0.99)]:
        z = norm.ppf(0.5 + level / 2)
        phat = n_s / n
        centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n))
        got = wilson_interval(n_s, n, level)
        assert got == pytest.approx((centre, centre - half, centre + half))
    with pytest.raises(ValidationError, match="`n_success` must be an int between 0 and `n_total`"):
        wilson_interval(11, 10)
    with pytest.raises(ValidationError, match=r"`confidence_level` must be in \(0, 1\); got 1"):
        wilson_interval(1, 10, 1)


def test_risk_propagation_by_hand() -> None:
    # a release that determines dx for its own records, and control records it says nothing of
    released = pd.DataFrame({"id": np.arange(200) % 100, "dx": np.arange(200) % 100 % 2})
    control = pd.DataFrame({"id": np.arange(100), "dx": (np.arange(100) // 2) % 2})
    r = inference_attack(released, released, control, "id", "dx", rng=0)
    assert r.success_targets == 1.0
    assert r.n_success_control == 50
    t, c = wilson_interval(200, 200), wilson_interval(50, 100)
    value = (t[0] - c[0]) / (1 - c[0])
    err = math.sqrt(
        ((t[0] - t[1]) / (1 - c[0])) ** 2 + ((c[0] - c[1]) * (t[0] - 1) / (1 - c[0]) ** 2) ** 2
    )
    assert r.risk == pytest.approx(value)
    assert r.risk_ci == pytest.approx((value - err, min(1.0, value + err)))
    # attacking the control with itself as targets: no excess, risk 0
    same = inference_attack(released, control, control, "id", "dx", rng=0)
    assert same.risk == 0.0 and same.risk_ci[0] == 0.0


def test_attack_approaches_the_bayes_attacker() -> None:
    # records drawn from a known joint p[s, y]: on fresh records the in-cell majority attacker
    # learns the MAP rule from the release, so its control success is the Bayes success
    joint = np.array([[0.30, 0.05, 0.10], [0.05, 0.25, 0.05], [0.05, 0.05, 0.10]])
    rng = np.random.default_rng(1)

    def draw(n: int) -> pd.DataFrame:
        cells = rng.choice(9, size=n, p=joint.ravel())
        return pd.DataFrame({"y": cells % 3, "s": cells // 3})

    released, control = draw(20_000), draw(4_000)
    r = inference_attack(released, released.iloc[:4_000], control, "y", "s", joint=joint, rng=0)
    assert r.bayes_success == pytest.approx(0.30 + 0.25 + 0.10)
    assert r.bayes_success is not None
    assert r.success_control_ci[0] <= r.bayes_success <= r.success_control_ci[1]
    assert r.risk_ci[0] == 0.0  # no record-level leak: the release is a plain sample
    assert bayes_attack_success(joint) == pytest.approx(0.65)


def test_to_dict_is_plain() -> None:
    r = inference_attack(RELEASED, RELEASED, RELEASED, QIS, "dx", rng=0)
    d = r.to_dict()
    assert isinstance(d["risk_ci"], list) and len(d["risk_ci"]) == 2
    assert d["bayes_success"] is None and d["n_targets"] == 12


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"released": RELEASED.values}, "`released` must be a pandas DataFrame; got ndarray."),
        ({"control": RELEASED.iloc[:0]}, "`control` must have at least one row; got an empty"),
        ({"targets": RELEASED[["age", "dx"]]}, "`targets` must have the column 'sex'; got"),
        ({"quasi_identifiers": []}, "`quasi_identifiers` must name at least one column"),
        ({"sensitive": ["dx"]}, "`sensitive` must be one column name; got ['dx']."),
        ({"sensitive": "age"}, "`sensitive` must not be a quasi-identifier; got 'age'."),
        (
            {"targets": RELEASED.assign(dx=pd.Series([None] + ["a"] * 11, dtype=object))},
            "`targets` must have no missing value in the sensitive column 'dx'.",
        ),
        ({"rng": -1}, "`rng` must be None, a non-negative int"),
    ],
)
def test_bad_inputs(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "released": RELEASED,
        "targets": RELEASED,
        "control": RELEASED,
        "quasi_identifiers": QIS,
        "sensitive": "dx",
    }
    args.update(kwargs)
    with pytest.raises(ValidationError) as err:
        inference_attack(**args)  # type: ignore[arg-type]
    assert message in str(err.value)
