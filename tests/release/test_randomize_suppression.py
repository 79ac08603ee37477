"""The search's suppressed cells released through an LP channel (``suppression="randomize"``,
issue 41 item 1): every symbol within epsilon, I(X; Y) at least the generalisation's H(Y), a
held-out figure, and a saved mechanism that ``apply`` draws from."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privwatch.exceptions import ValidationError
from privwatch.release import ReleaseNotMetWarning, find_release
from privwatch.release.search import suppression_mechanism

from ._reference_venvs import census_like

OBS = ["age", "sex", "race", "education", "marital"]


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    df = census_like(5000, np.random.default_rng(0))
    df["age"] = pd.cut(df["age"], [0, 25, 35, 45, 55, 65, 200]).astype(str)
    return df


def _find(df: pd.DataFrame, suppression: str) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        return find_release(
            df, "income", OBS, epsilon=1.0, suggest=False, frontier_epsilons=[],
            suppression=suppression,
        )  # fmt: skip


def _channel_lift(df: pd.DataFrame, sc: object) -> float:
    """Worst |log-lift| of a symbol under the channel, counted afresh from the records: symbol
    y's counts are sum over tuples x of n(s, x) w[x, y]."""
    row = pd.MultiIndex.from_frame(sc.raw).get_indexer(
        pd.MultiIndex.from_frame(df[OBS].astype(str))
    )
    counts = pd.crosstab(row, df["income"].to_numpy()).reindex(range(len(sc.raw)), fill_value=0)
    mass = sc.weights.toarray().T @ counts.to_numpy(dtype=float)
    live = mass.sum(1) > 0
    prior = counts.to_numpy().sum(0) / len(df)
    with np.errstate(divide="ignore"):
        lift = np.abs(np.log(mass[live] / mass[live].sum(1, keepdims=True)) - np.log(prior))
    return float(lift.max())


def test_randomize_keeps_more_within_epsilon(census: pd.DataFrame) -> None:
    star = _find(census, "star")
    rand = _find(census, "randomize")
    assert star.suppressed_records > 0 and star.suppression is None
    assert "suppression" not in star.to_dict()["release"]
    sc = rand.suppression
    assert sc is not None and sc.randomized
    assert sc.star_information_nats == pytest.approx(star.information_nats, abs=1e-9)
    assert rand.information_nats > star.information_nats
    assert sc.worst_log_lift_in_sample <= 1.0 + 1e-6
    assert rand.held_out is not None and rand.satisfied == (rand.held_out_verdict == "met")
    lo, hi = rand.held_out.breach_probability_ci
    assert lo <= rand.held_out.breach_probability <= hi
    assert rand.to_dict()["release"]["suppression"]["randomized"] is True
    # the kept cells are released as the search releases them
    kept = ~star.records["suppressed"].to_numpy(dtype=bool)
    pd.testing.assert_frame_equal(
        rand.released[kept].reset_index(drop=True), star.released[kept].reset_index(drop=True)
    )
    assert rand.released[~kept].ne("*").any(axis=1).any()  # some suppressed records kept
    # every symbol of the channel (kept cells and drawn ones) within epsilon on the records
    assert _channel_lift(census, sc) <= 1.0 + 1e-6


def test_saved_channel_applies_with_a_seed(census: pd.DataFrame) -> None:
    rand = _find(census, "randomize")
    mech = suppression_mechanism(rand.suppression, sensitive="income", status="met")
    a = mech.apply(census, rng=3)
    b = mech.apply(census, rng=3)
    pd.testing.assert_frame_equal(a, b)
    star = _find(census, "star")
    kept = ~star.records["suppressed"].to_numpy(dtype=bool)
    pd.testing.assert_frame_equal(
        a[kept].reset_index(drop=True), star.released[kept].reset_index(drop=True)
    )
    # a suppressed record is drawn among the symbols its channel row can emit
    w = rand.suppression.weights.toarray()
    sym = [*rand.suppression.symbols.astype(str).agg("|".join, axis=1).tolist(), "*|" * 4 + "*"]
    drawn = a[~kept].astype(str).agg("|".join, axis=1).to_numpy()
    tuple_row = pd.MultiIndex.from_frame(rand.suppression.raw).get_indexer(
        pd.MultiIndex.from_frame(census.loc[~kept, OBS].astype(str))
    )
    for t, d in zip(tuple_row, drawn, strict=True):
        assert d in {sym[j] for j in np.flatnonzero(w[t] > 0)}


def test_suppression_is_checked(census: pd.DataFrame) -> None:
    with pytest.raises(ValidationError, match="suppression"):
        find_release(census, "income", OBS, epsilon=1.0, folds=0, suppression="blur")
    with pytest.raises(ValidationError, match="useful"):
        find_release(
            census, "income", OBS, epsilon=1.0, folds=0, suppression="randomize", useful="sex"
        )
