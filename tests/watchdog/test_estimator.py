"""The table-level Watchdog estimator."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from privwatch import Joint, NotFittedError, PrivacyWarning, ValidationError, Watchdog
from privwatch import measures as m
from privwatch import watchdog as wd
from privwatch.watchdog._plugin import PluginStrategy

TRUE_P = np.array([[0.20, 0.05, 0.10, 0.08, 0.02, 0.05], [0.05, 0.15, 0.10, 0.07, 0.08, 0.05]])


def _sample(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cells = rng.choice(TRUE_P.size, size=n, p=TRUE_P.ravel())
    s, x = np.divmod(cells, TRUE_P.shape[1])
    return pd.DataFrame({"s": s, "a": x // 3, "b": np.array(list("uvw"))[x % 3]})


@pytest.mark.parametrize("n", [2_000, 200_000])
def test_flags_converge_to_true_partition(n: int) -> None:
    eps = 0.3  # true risks: 0.47, 0.54, 0, 0.08, 0.47, 0 -> away from the threshold
    truth = wd.partition(TRUE_P, eps)
    est = Watchdog(epsilon=eps, sensitive="s", observed=["a", "b"]).fit(_sample(n, 0))
    agree = float(np.mean(est.keep_ == truth))
    # flagging nothing or everything agrees on 3 of 6 symbols; the estimate must do better
    assert agree == 1.0 if n >= 200_000 else agree >= 5 / 6
    assert est.lift_.shape == (6, 2)
    columns: list[object] = list(est.lift_.columns)
    assert columns == [0, 1]
    # plug-in log-lift error within 4 standard errors of the rarest cell (sd ~ 1/sqrt(n p_min))
    error = np.abs(est.lift_.to_numpy() - m.log_lift(TRUE_P).T).max()
    assert error < 4 / np.sqrt(n * TRUE_P.min()), error


@pytest.mark.parametrize("randomization", ["merge", "uniform"])
def test_release_carries_reported_guarantee(randomization: str) -> None:
    df = _sample(50_000, 1)
    est = Watchdog(
        epsilon=0.3, randomization=randomization, rng=0, sensitive="s", observed=["a", "b"]
    ).fit(df)
    release = est.transform(df)
    assert "s" not in release.columns
    flagged = est.flag(df)
    assert flagged.mean() == pytest.approx(est.guarantee_.flagged_probability)
    kept = ~flagged
    pd.testing.assert_frame_equal(
        release[kept].astype(str), df.loc[kept, ["a", "b"]].astype(str), check_dtype=False
    )
    rel = release.assign(s=df["s"].to_numpy())
    joint = Joint.from_frame(rel.astype(str), "s", ["a", "b"])
    realized = m.lift_epsilon(joint.p)
    if randomization == "merge":
        assert realized == pytest.approx(est.guarantee_.effective_epsilon, abs=1e-12)
        assert set(release.loc[flagged, "a"].astype(str)) == {"*"}
        assert est.leakage_after_.lift_epsilon == pytest.approx(est.guarantee_.effective_epsilon)
        # the stated breach probability of the threshold, recomputed from the release itself
        ll = np.abs(m.log_lift(joint.p))
        breach = float(joint.p[ll > 0.3 + 1e-12].sum())
        assert est.guarantee_.breach_probability == pytest.approx(breach, abs=1e-12)
    else:  # uniform draws: exact in expectation, close in a sample
        assert realized == pytest.approx(est.guarantee_.effective_epsilon, abs=0.05)
    assert est.leakage_after_.mutual_information < est.leakage_before_.mutual_information
    assert "lift privacy" in est.guarantee_.explain()


def test_uniform_release_is_reproducible_and_draws_from_flagged_pool() -> None:
    df = _sample(5_000, 2)
    a = Watchdog(
        epsilon=0.3, randomization="uniform", rng=7, sensitive="s", observed=["a", "b"]
    ).fit(df)
    r1, r2 = a.transform(df), a.transform(df)
    pd.testing.assert_frame_equal(r1, r2)
    flagged = a.flag(df)
    pool = {tuple(t) for t in a.lift_.index[~a.keep_]}
    drawn = set(zip(r1.loc[flagged, "a"], r1.loc[flagged, "b"], strict=True))
    assert drawn <= pool


def test_scores_match_fitted_log_lift() -> None:
    df = _sample(20_000, 3)
    est = Watchdog(epsilon=0.3, sensitive="s", observed=["a", "b"]).fit(df)
    scores = est.score_records(df)
    assert scores.log_lift.shape == (len(df), 2)
    risk = est.score_samples(df)
    assert risk.shape == (len(df),) and risk.dtype == np.float64
    assert np.array_equal(risk, scores.risk)
    ll = m.log_lift(est.joint_.p)
    assert isinstance(est.strategy_, PluginStrategy)
    sym = est.strategy_.encoder.transform(df)
    assert np.allclose(scores.log_lift, ll.T[sym])
    assert np.allclose(scores.risk, np.abs(ll.T[sym]).max(axis=1))
    assert np.array_equal(est.flag(df), scores.risk > 0.3)
    assert list(scores.to_frame().columns) == ["risk", "log_lift[0]", "log_lift[1]", "known"]


def test_unseen_tuples_are_flagged_with_warning() -> None:
    df = _sample(5_000, 4)
    est = Watchdog(epsilon=5.0, sensitive="s", observed=["a", "b"]).fit(df)
    new = pd.DataFrame({"a": [0, 7], "b": ["u", "u"]})
    with pytest.warns(PrivacyWarning, match="1 records have observed values never seen"):
        flags = est.flag(new)
    assert flags.tolist() == [False, True]
    with pytest.warns(PrivacyWarning):
        scores = est.score_records(new)
    assert scores.risk[1] == math.inf and not scores.known[1]
    with pytest.warns(PrivacyWarning):
        out = est.transform(new)
    assert out["a"].astype(str).tolist() == ["0", "*"]


def test_relaxed_guarantee() -> None:
    df = _sample(50_000, 5)
    est = Watchdog(epsilon=0.3, delta=0.2, sensitive="s", observed=["a", "b"]).fit(df)
    strict = Watchdog(epsilon=0.3, sensitive="s", observed=["a", "b"]).fit(df)
    assert est.guarantee_.breach_probability <= 0.2
    assert est.utility_.nmil <= strict.utility_.nmil
    assert est.flag(df).mean() <= strict.flag(df).mean()


def test_numpy_input_and_params_round_trip() -> None:
    df = _sample(3_000, 6)
    est = Watchdog(epsilon=0.4, smoothing=0.5)
    est.fit(df[["a", "b"]].to_numpy(), df["s"].to_numpy())
    assert est.observed_ == ["x0", "x1"]
    assert est.flag(df[["a", "b"]].to_numpy()).shape == (3_000,)
    params = est.get_params()
    assert params["epsilon"] == 0.4 and params["smoothing"] == 0.5
    clone = Watchdog(**params)
    assert clone.get_params() == params
    assert clone.set_params(epsilon=0.2).epsilon == 0.2
    assert "Watchdog(epsilon=0.2" in repr(clone)


def test_fit_transform_warns_about_same_records() -> None:
    df = _sample(3_000, 7)
    with pytest.warns(PrivacyWarning, match="very records being released"):
        Watchdog(epsilon=0.3, sensitive="s", observed=["a", "b"]).fit_transform(df)


def test_bad_inputs() -> None:
    df = _sample(1_000, 8).assign(income=np.linspace(0, 1, 1_000))
    with pytest.raises(NotFittedError, match="not fitted yet"):
        Watchdog().flag(df)
    with pytest.raises(ValidationError, match=r"'income' \(1000 distinct values\)"):
        Watchdog(sensitive="s", observed=["a", "income"]).fit(df)
    with pytest.raises(ValidationError, match="`epsilon` must be a non-negative"):
        Watchdog(epsilon=-1, sensitive="s", observed=["a"]).fit(df)
    with pytest.raises(ValidationError, match="`delta` must be a number in"):
        Watchdog(delta=1.5, sensitive="s", observed=["a"]).fit(df)
    with pytest.raises(ValidationError, match="`randomization` must be 'merge' or 'uniform'"):
        Watchdog(randomization="shuffle", sensitive="s", observed=["a"]).fit(df)
    with pytest.raises(ValidationError, match="`sensitive` must name a column"):
        Watchdog(sensitive="race", observed=["a"]).fit(df)
    with pytest.raises(ValidationError, match="`observed` must not contain the sensitive"):
        Watchdog(sensitive="s", observed=["s", "a"]).fit(df)
    with pytest.raises(ValidationError, match="`y` must be one sensitive label per record"):
        Watchdog().fit(df[["a"]].to_numpy(), np.zeros(3))
    with pytest.raises(ValueError, match="Invalid parameter 'zzz'"):  # scikit-learn's message
        Watchdog().set_params(zzz=1)
    est = Watchdog(sensitive="s", observed=["a"]).fit(df)
    with pytest.raises(ValidationError, match="`X` must have the 1 observed columns"):
        est.flag(np.zeros((3, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValidationError, match="`a` must have no missing values"):
            est.flag(pd.DataFrame({"a": [np.nan]}))


def test_evaluate_on_training_records_matches_fit() -> None:
    df = _sample(20_000, 9)
    est = Watchdog(epsilon=0.3, sensitive="s", observed=["a", "b"]).fit(df)
    ev = est.evaluate(df)
    assert ev.guarantee.effective_epsilon == pytest.approx(est.guarantee_.effective_epsilon)
    assert ev.utility.utility_mi == pytest.approx(est.utility_.utility_mi)
    assert ev.leakage_after.mutual_information == pytest.approx(
        est.leakage_after_.mutual_information
    )
    assert ev.gamma_bound >= ev.guarantee.effective_epsilon
    assert ev.n_unseen == 0


def test_evaluate_on_held_out_records_flags_unseen() -> None:
    train, test = _sample(5_000, 10), _sample(5_000, 11)
    test.loc[:9, "b"] = "z"  # ten tuples never seen at fit time
    est = Watchdog(epsilon=0.3, sensitive="s", observed=["a", "b"]).fit(train)
    ev = est.evaluate(test)
    assert ev.n_unseen == 10
    with pytest.warns(PrivacyWarning, match="10 records have observed values never seen"):
        flagged = est.flag(test)
    assert ev.guarantee.flagged_probability == pytest.approx(flagged.mean())
    with pytest.raises(ValidationError, match="`sensitive` must take values seen at fit time"):
        est.evaluate(test.assign(s=7))
