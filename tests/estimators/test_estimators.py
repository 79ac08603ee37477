"""Log-lift estimators: accuracy on a case with a closed form, determinism, persistence, errors."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from privwatch import PrivacyWarning, ValidationError
from privwatch import measures as m
from privwatch.estimators import ClassifierLift, DVLift, PluginLift, TabularPreprocessor
from privwatch.exceptions import TamperedFileError

FAST: dict[str, Any] = {"epochs": 60, "n_ensemble": 2, "patience": 10, "batch_size": 256}
PRIOR = np.array([0.5, 0.5])


def gaussian_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S uniform on {0, 1}; X | S ~ N(+-0.6 e_1, I_2): i(s, x) has a closed form."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    mu = np.array([[-0.6, 0.0], [0.6, 0.0]])
    x = mu[s] + rng.standard_normal((n, 2))
    logp = np.stack([-0.5 * ((x - mu[k]) ** 2).sum(1) for k in range(2)], axis=1)
    truth = logp - logsumexp(logp + np.log(PRIOR), axis=1)[:, None]
    return x, s, truth


@pytest.mark.slow  # four neural fits of 3,000 records: 10-40 s each on a shared 2-core machine
@pytest.mark.parametrize(
    "make",
    [
        lambda: ClassifierLift(rng=0, **FAST),
        lambda: DVLift(rng=0, **FAST),
        lambda: DVLift(rng=0, product="exact", **FAST),
        lambda: DVLift(rng=0, objective="nwj", **FAST),
    ],
    ids=["classifier", "dv-shuffle", "dv-exact", "nwj"],
)
def test_neural_estimators_recover_closed_form(make) -> None:  # type: ignore[no-untyped-def]
    x, s, _ = gaussian_pair(3000, 0)
    x_te, s_te, truth = gaussian_pair(2000, 1)
    est = make().fit(x, s)
    ll = est.log_lift(x_te)
    assert ll.shape == (2000, 2)
    rmse = float(np.sqrt(np.mean((ll - truth) ** 2)))
    assert rmse < 0.15, rmse
    # every log-lift satisfies sum_s P(s) exp(i(s, x)) = 1
    assert np.allclose(np.exp(ll) @ est.prior_, 1.0, atol=1e-9)
    true_mi = float(np.mean(truth[np.arange(2000), s_te]))
    assert est.mutual_information(x_te, s_te) == pytest.approx(true_mi, abs=0.03)
    assert np.array_equal(est.score_samples(x_te), np.abs(ll).max(axis=1))


@pytest.mark.slow  # a neural fit of 3,000 records (ensemble of 2)
def test_dv_diagnostics_and_bound() -> None:
    x, s, truth = gaussian_pair(3000, 2)
    est = DVLift(rng=0, **FAST).fit(x, s)
    assert 0 <= est.normalization_error_ < 0.5
    true_mi = float(np.mean(truth[np.arange(3000), s]))
    assert 0 < est.bound(x, s) < true_mi + 0.05
    assert len(est.histories_) == 2 and 0 <= est.best_epochs_[0] < len(est.histories_[0])


@pytest.mark.parametrize("cls", [ClassifierLift, DVLift])
def test_same_rng_same_result(cls) -> None:  # type: ignore[no-untyped-def]
    x, s, _ = gaussian_pair(800, 3)
    a = cls(rng=5, epochs=5, n_ensemble=1).fit(x, s).log_lift(x[:50])
    b = cls(rng=5, epochs=5, n_ensemble=1).fit(x, s).log_lift(x[:50])
    c = cls(rng=6, epochs=5, n_ensemble=1).fit(x, s).log_lift(x[:50])
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("cls", [ClassifierLift, DVLift])
def test_save_and_load_without_pickle(cls, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    df = pd.DataFrame({"num": np.arange(300) % 7 * 1.0, "cat": list("abc") * 100})
    s = np.array(["u", "v"] * 150)
    est = cls(rng=1, epochs=5, n_ensemble=2).fit(df, s)
    path = tmp_path / "est.json"
    est.save(path)
    state = json.loads(path.read_text())  # plain JSON, weights included (checksummed)
    assert state["kind"] == cls.__name__ and state["format"] == "privwatch-model"
    loaded = cls.load(path)
    assert np.allclose(loaded.log_lift(df), est.log_lift(df))
    assert loaded.sensitive_labels_ == ["u", "v"]
    other = DVLift if cls is ClassifierLift else ClassifierLift
    with pytest.raises(TamperedFileError, match=f"not a {other.__name__}"):
        other.load(path)


def test_sklearn_classifier_path() -> None:
    from sklearn.linear_model import LogisticRegression

    x, s, truth = gaussian_pair(3000, 4)
    est = ClassifierLift(classifier=LogisticRegression(), rng=0).fit(x, s)
    assert float(np.sqrt(np.mean((est.log_lift(x) - truth) ** 2))) < 0.1
    with pytest.raises(ValidationError, match="cannot be saved without pickle"):
        est.save("unused.json")
    with pytest.raises(ValidationError, match="must have a predict_proba"):
        ClassifierLift(classifier=object()).fit(x, s)


def test_plugin_matches_empirical_pmf_and_persists(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, 2000)
    s = (rng.random(2000) < 0.2 + 0.15 * x).astype(int)
    est = PluginLift().fit(pd.DataFrame({"x": x}), s)
    counts = np.zeros((2, 4))
    np.add.at(counts, (s, x), 1)
    expected = m.log_lift(counts / counts.sum())
    assert np.allclose(est.log_lift(pd.DataFrame({"x": [0, 1, 2, 3]})), expected.T)
    with pytest.warns(PrivacyWarning, match="unseen at fit time"):
        ll = est.log_lift(pd.DataFrame({"x": [9]}))
    assert np.isnan(ll).all()
    assert est.score_samples(pd.DataFrame({"x": [0]}))[0] == pytest.approx(
        np.abs(expected[:, 0]).max()
    )
    est.save(tmp_path / "p.json")
    loaded = PluginLift.load(tmp_path / "p.json")
    assert np.allclose(loaded.log_lift(pd.DataFrame({"x": [0, 3]})), expected.T[[0, 3]])


def test_plugin_leaves_the_callers_frame_untouched() -> None:
    df = pd.DataFrame({0: [1, 2, 1, 2] * 5})
    PluginLift().fit(df, [0, 1, 1, 0] * 5)
    assert df.columns.equals(pd.Index([0]))  # the integer column name, not "0"


def test_preprocessor_fitted_on_training_data_only() -> None:
    train = pd.DataFrame({"a": [1.0, 2.0, 3.0], "c": ["x", "y", "x"]})
    pre = TabularPreprocessor().fit(train)
    out = pre.transform(pd.DataFrame({"a": [2.0, 5.0], "c": ["y", "zzz"]}))
    sd = np.std([1.0, 2.0, 3.0])
    assert out[:, 0] == pytest.approx([0.0, 3.0 / sd])
    assert out[1, 1:].tolist() == [0.0, 0.0]  # unseen category -> all zeros
    again = TabularPreprocessor.from_dict(json.loads(json.dumps(pre.to_dict())))
    assert np.array_equal(again.transform(train), pre.transform(train))
    with pytest.raises(ValidationError, match="`a` must have no missing values"):
        pre.transform(pd.DataFrame({"a": [np.nan], "c": ["x"]}))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"epochs": 0}, "`epochs` must be a positive int"),
        ({"batch_size": 0}, "`batch_size` must be a positive int"),
        ({"lr": -1.0}, "`lr` must be a positive"),
        ({"validation_fraction": 1.0}, r"`validation_fraction` must be in \(0, 1\)"),
        ({"activation": "gelu"}, "`activation` must be one of"),
        ({"n_ensemble": 0}, "`n_ensemble` must be a positive int"),
        ({"optimizer": "sgd"}, "`optimizer` must be .adam. or .adagrad."),
        ({"hidden": (0,)}, "`hidden` must be positive layer widths"),
    ],
)
def test_bad_parameters(kwargs, pattern) -> None:  # type: ignore[no-untyped-def]
    x, s, _ = gaussian_pair(100, 5)
    with pytest.raises(ValidationError, match=pattern):
        ClassifierLift(**kwargs).fit(x, s)


def test_bad_inputs() -> None:
    x, s, _ = gaussian_pair(100, 6)
    with pytest.raises(ValidationError, match="`objective` must be 'dv' or 'nwj'"):
        DVLift(objective="mine").fit(x, s)
    with pytest.raises(ValidationError, match="`product` must be 'shuffle' or 'exact'"):
        DVLift(product="outer").fit(x, s)
    with pytest.raises(
        ValidationError, match=r"`s` must be one sensitive label per record \(100\)"
    ):
        ClassifierLift().fit(x, s[:10])
    with pytest.raises(ValidationError, match="`s` must take at least two values"):
        ClassifierLift().fit(x, np.zeros(100))
    with pytest.raises(ValidationError, match="`X` must be a DataFrame or a 2-D array"):
        ClassifierLift().fit(np.zeros((2, 2, 2)), [0, 1])
    est = ClassifierLift(epochs=2, n_ensemble=1).fit(x, s)
    with pytest.raises(ValidationError, match="`X` must have the 2 columns seen at fit time"):
        est.log_lift(np.zeros((3, 5)))
    with pytest.raises(ValidationError, match="`s` must take values seen at fit time"):
        est.mutual_information(x, np.full(100, 7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isfinite(est.mutual_information(x, s))
