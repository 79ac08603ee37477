"""PosteriorLift baselines and AutoLift (issue #16): closed-form accuracy, mixed-type tables,
selection by held-out log-loss, persistence, the scikit-learn contract and global RNG state."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.special import logsumexp
from sklearn.base import clone

from privwatch import ValidationError
from privwatch.estimators import (
    AutoLift,
    ClassifierLift,
    DVLift,
    MixtureLift,
    PluginLift,
    PosteriorLift,
    make_lift_estimator,
    posterior_log_loss,
)
from privwatch.exceptions import TamperedFileError

warnings.filterwarnings("ignore", category=FutureWarning)
BASELINES = ("quadratic_logistic", "gradient_boosting")


def gaussian_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S uniform on {0, 1}; X | S ~ N(+-0.6 e_1, I_2): the log-odds are linear in x."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    mu = np.array([[-0.6, 0.0], [0.6, 0.0]])
    x = mu[s] + rng.standard_normal((n, 2))
    logp = np.stack([-0.5 * ((x - mu[k]) ** 2).sum(1) for k in range(2)], axis=1)
    return x, s, logp - logsumexp(logp + np.log(0.5), axis=1)[:, None]


def mixed_table(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """S in {'no', 'yes'} (0.7 / 0.3); a categorical column with P(c | s) and a numeric one
    N(s, 1): the closed-form log-lift is linear in the one-hot and numeric features."""
    rng = np.random.default_rng(seed)
    prior = np.array([0.7, 0.3])
    pc = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    s = (rng.random(n) < prior[1]).astype(int)
    c = np.array([rng.choice(3, p=pc[k]) for k in s])
    u = rng.normal(s.astype(float), 1.0)
    logp = np.stack([np.log(pc[k][c]) - 0.5 * (u - k) ** 2 for k in range(2)], axis=1)
    truth = logp - logsumexp(logp + np.log(prior), axis=1)[:, None]
    frame = pd.DataFrame({"job": np.array(["clerk", "nurse", "pilot"])[c], "income": u})
    return frame, np.array(["no", "yes"])[s], truth


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


def test_quadratic_logistic_recovers_closed_form_with_cv_chosen_strength() -> None:
    x, s, _ = gaussian_pair(3000, 0)
    x_te, _, truth = gaussian_pair(2000, 1)
    est = PosteriorLift(rng=0).fit(x, s)
    assert rmse(est.log_lift(x_te), truth) < 0.15
    assert min(est.cv_log_loss_, key=est.cv_log_loss_.get) == est.C_  # type: ignore[arg-type]
    assert np.allclose(np.exp(est.log_lift(x_te)) @ est.prior_, 1.0)


def test_gradient_boosting_baseline_and_its_tree_size_choice() -> None:
    x, s, _ = gaussian_pair(3000, 0)
    x_te, _, truth = gaussian_pair(2000, 1)
    est = PosteriorLift(family="gradient_boosting", rng=0).fit(x, s)
    assert rmse(est.log_lift(x_te), truth) < 0.25
    assert est.max_leaf_nodes_ == min(est.cv_log_loss_, key=est.cv_log_loss_.get)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="cannot be saved without pickle"):
        est.save("unused.json")


@pytest.mark.parametrize("family", BASELINES)
def test_mixed_type_table(family: str) -> None:
    frame, s, _ = mixed_table(4000, 2)
    test, _, truth = mixed_table(2000, 3)
    est = PosteriorLift(family=family, rng=0).fit(frame, s)
    assert est.sensitive_labels_ == ["no", "yes"]
    assert rmse(est.log_lift(test), truth) < (0.1 if family == "quadratic_logistic" else 0.3)


def test_quadratic_logistic_saves_as_json_and_reloads(tmp_path: Path) -> None:
    frame, s, _ = mixed_table(1500, 4)
    est = PosteriorLift(rng=1).fit(frame, s)
    est.save(tmp_path / "m.json")
    back = PosteriorLift.load(tmp_path / "m.json")
    assert np.allclose(back.log_lift(frame), est.log_lift(frame))
    (tmp_path / "bad.json").write_text('{"kind": "DVLift"}')
    with pytest.raises(TamperedFileError, match="must be an intact privwatch model file"):
        PosteriorLift.load(tmp_path / "bad.json")


def test_auto_selects_by_heldout_log_loss_and_records_why() -> None:
    x, s, _ = gaussian_pair(3000, 5)
    est = AutoLift(candidates=BASELINES, rng=0).fit(x, s)
    table = est.selection_
    assert list(table["family"]) == list(BASELINES)
    assert table["chosen"].sum() == 1
    assert set(table.columns) >= {"heldout_log_loss", "calibration_error", "standard_error"}
    # the log-odds are linear here: the quadratic logistic model is the true family
    assert est.best_name_ == "quadratic_logistic"
    assert "held-out log-loss" in est.reason_ and "chosen" in est.reason_
    assert isinstance(est.best_, PosteriorLift)
    x_te, _, truth = gaussian_pair(1000, 6)
    assert np.array_equal(est.log_lift(x_te), est.best_.log_lift(x_te))
    assert rmse(est.log_lift(x_te), truth) < 0.15


def test_one_standard_error_rule() -> None:
    rng = np.random.default_rng(0)
    base = rng.exponential(0.6, 2000)
    simple = base + 0.001 + rng.normal(0, 0.05, 2000)  # slightly worse, within noise
    table = [{"family": "quadratic_logistic"}, {"family": "mlp"}]
    assert AutoLift._choose(table, [simple, base], "one_standard_error") == 0
    assert "within one standard error" in table[0]["reason"]
    assert AutoLift._choose(table, [simple, base]) == 1  # default: the lowest
    assert "chosen: the lowest" in table[1]["reason"]
    much_worse = base + 0.05 + rng.normal(0, 0.05, 2000)
    table = [{"family": "quadratic_logistic"}, {"family": "mlp"}]
    assert AutoLift._choose(table, [much_worse, base], "one_standard_error") == 1


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "bound"), [("lowest", 0.15), ("stack", 0.2)])
def test_auto_with_neural_candidates_on_mixed_table(rule: str, bound: float) -> None:
    frame, s, _ = mixed_table(2000, 7)
    test, _, truth = mixed_table(1000, 8)
    est = AutoLift(candidates=("quadratic_logistic", "mlp", "dv"), selection_rule=rule, rng=0)
    est.fit(frame, s)
    assert est.selection_["heldout_log_loss"].notna().all()
    # measured (seed 0): lowest picks quadratic_logistic, RMSE 0.119; the stack (quadratic
    # logistic 0.50 + dv 0.41 + mlp 0.09) reaches 0.177: dv's log-loss is as good (0.4812 vs
    # 0.4810) but its log-lifts of the unlikely sensitive value (about -2.7 nats, where the
    # posterior is small and the log-loss barely looks) are off, and the pool inherits that.
    # A known cost of weighting by log-loss (BENCHMARKS.md #16), kept visible here.
    assert rmse(est.log_lift(test), truth) < bound


def test_posterior_log_loss_of_the_truth_is_lower() -> None:
    x, s, _ = gaussian_pair(2000, 9)
    good = PosteriorLift(rng=0).fit(x, s)
    blind = PosteriorLift(rng=0).fit(np.zeros((2000, 1)) + x[:, 1:], s)  # sees only noise
    loss_good, ece = posterior_log_loss(good, x, s)
    loss_blind, _ = posterior_log_loss(blind, x[:, 1:], s)
    assert loss_good.mean() < loss_blind.mean() <= np.log(2) + 0.01
    assert 0 <= ece < 0.1


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"candidates": ("svm",)}, "`candidates` must be a non-empty tuple"),
        ({"candidates": ()}, "`candidates` must be a non-empty tuple"),
        ({"selection_cv": 1}, "`selection_cv` must be at least 2"),
        ({"selection_rule": "best"}, "`selection_rule` must be one of"),
        ({"selection_size": 0}, "`selection_size`"),
        ({"max_refit_rows": 0}, "`max_refit_rows`"),
    ],
)
def test_auto_bad_parameters(kwargs: dict[str, object], pattern: str) -> None:
    x, s, _ = gaussian_pair(200, 0)
    with pytest.raises(ValidationError, match=pattern):
        AutoLift(**kwargs).fit(x, s)  # type: ignore[arg-type]


def test_posterior_bad_parameters_and_inputs() -> None:
    x, s, _ = gaussian_pair(200, 0)
    with pytest.raises(ValidationError, match="`family` must be one of"):
        PosteriorLift(family="forest").fit(x, s)
    with pytest.raises(ValidationError, match="`cv` must be at least 2"):
        PosteriorLift(cv=1).fit(x, s)
    with pytest.raises(ValidationError, match="`C` must be a positive finite number"):
        PosteriorLift(C=-1.0).fit(x, s)
    with pytest.raises(ValidationError, match="`s` must take at least two values"):
        PosteriorLift().fit(x, np.zeros(200))
    with pytest.raises(ValidationError, match="`s` must be one sensitive label per record"):
        PosteriorLift().fit(x, s[:10])


def test_make_lift_estimator() -> None:
    assert isinstance(make_lift_estimator("auto", rng=0), AutoLift)
    assert isinstance(make_lift_estimator("plugin"), PluginLift)
    assert isinstance(make_lift_estimator("dv", rng=1), DVLift)
    est = make_lift_estimator("gradient_boosting", rng=1)
    assert isinstance(est, PosteriorLift) and est.family == "gradient_boosting"
    with pytest.raises(ValidationError, match="`estimator` must be 'auto', 'plugin' or one of"):
        make_lift_estimator("forest")


@pytest.mark.parametrize(
    "est",
    [
        PosteriorLift(C=0.1, rng=3),
        AutoLift(candidates=("quadratic_logistic",), rng=3),
        ClassifierLift(epochs=3, n_ensemble=1, rng=3),
        DVLift(epochs=3, n_ensemble=1, rng=3),
    ],
    ids=["posterior", "auto", "classifier", "dv"],
)
def test_sklearn_clone_round_trip_and_global_rng_untouched(est: object) -> None:
    x, s, _ = gaussian_pair(600, 10)
    twin = clone(est)
    assert twin.get_params() == est.get_params()  # type: ignore[attr-defined]
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()  # noqa: NPY002 (the global state is what is checked)
    a = twin.fit(x, s).log_lift(x[:20])
    b = clone(est).fit(x, s).log_lift(x[:20])
    assert np.array_equal(a, b)
    assert torch.equal(torch.get_rng_state(), torch_state)
    after = np.random.get_state()  # noqa: NPY002 (the global state is what is checked)
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1])  # type: ignore[index]


def cluster_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S uniform on {0, 1}; X | S=0 ~ N(0, I_2), X | S=1 an equal mixture of N(+-2 e_1, I_2):
    the log-odds are not quadratic in x, a two-component mixture per value is exact."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    sign = rng.choice([-2.0, 2.0], size=n)
    x = rng.standard_normal((n, 2)) + np.where(s == 1, sign, 0.0)[:, None] * np.array([1.0, 0.0])
    p0 = -0.5 * (x**2).sum(1)
    p1 = logsumexp([-0.5 * ((x - [m, 0.0]) ** 2).sum(1) for m in (-2.0, 2.0)], axis=0)
    p1 = p1 - np.log(2)
    logp = np.stack([p0, p1], axis=1)
    return x, s, logp - logsumexp(logp + np.log(0.5), axis=1)[:, None]


def test_gaussian_mixture_family_where_it_is_well_specified(tmp_path: Path) -> None:
    x, s, _ = cluster_pair(3000, 0)
    x_te, _, truth = cluster_pair(2000, 1)
    est = MixtureLift(components=(1, 2), covariances=("spherical", "full"), rng=0).fit(x, s)
    quad = PosteriorLift(rng=0).fit(x, s)
    # truth up to 4 nats in size: the mixture 0.17, the quadratic logistic 0.63 (seed 0)
    assert rmse(est.log_lift(x_te), truth) < 0.25 < 0.5 < rmse(quad.log_lift(x_te), truth)
    assert f"{est.covariance_}/{est.n_components_}" in est.cv_log_loss_
    assert est.n_components_ == 2  # one component cannot fit S=1's two clusters
    assert np.allclose(np.exp(est.log_lift(x_te)) @ est.prior_, 1.0)
    assert est.frozen_estimator().get_params()["n_components"] == est.n_components_
    est.save(tmp_path / "m.json")
    back = MixtureLift.load(tmp_path / "m.json")
    assert np.allclose(back.log_lift(x_te), est.log_lift(x_te))
    with pytest.raises(TamperedFileError, match="not a MixtureLift"):
        PosteriorLift(C=1.0, rng=0).fit(x, s).save(tmp_path / "q.json")
        MixtureLift.load(tmp_path / "q.json")


def test_auto_picks_the_mixture_where_it_wins() -> None:
    x, s, _ = cluster_pair(3000, 2)
    est = AutoLift(
        candidates=("quadratic_logistic", "gaussian_mixture"), selection_rule="lowest", rng=0
    )
    est.fit(x[:1500], s[:1500])
    assert est.best_name_ == "gaussian_mixture", est.reason_
    assert isinstance(est.best_, MixtureLift)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"covariances": ("tied",)}, "`covariances` must be a non-empty tuple"),
        ({"components": ()}, "`components` must be a non-empty tuple"),
        ({"components": (0,)}, "`components`"),
        ({"cv": 1}, "`cv` must be at least 2"),
        ({"reg_covar": 0.0}, "`reg_covar` must be a positive finite number"),
    ],
)
def test_mixture_bad_parameters(kwargs: dict[str, object], pattern: str) -> None:
    x, s, _ = cluster_pair(200, 0)
    with pytest.raises(ValidationError, match=pattern):
        MixtureLift(**kwargs).fit(x, s)  # type: ignore[arg-type]
