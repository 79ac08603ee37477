"""The fold models' error directions (:func:`privwatch.estimators.fold_deviations`) and the
learned watchdog's held-out interval drawing them as an error shared by every record (issue
#41 item 3)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privwatch import ValidationError
from privwatch.estimators import (
    Calibration,
    PosteriorLift,
    fold_deviations,
    learned_breach,
    margin_flags,
)

from .test_auto import gaussian_pair

warnings.filterwarnings("ignore", category=FutureWarning)


def test_fold_deviations_square_to_the_jackknife_variance() -> None:
    x, s, _ = gaussian_pair(1500, 7)
    est = PosteriorLift(rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = est.fit_score(x, s, cv=5, n_repeats=3, interval="jackknife")
    basis = fold_deviations(est, x)
    assert basis.shape == (15, 1500, scores.log_lift.shape[1])
    # the diagonal of the drawn covariance is the grouped jackknife's variance (the records'
    # sd also carries the cross-fitting's extra 1 / (R (K - 1)))
    jack = scores.sd**2 / (1 + 1 / (3 * 4))
    np.testing.assert_allclose((basis**2).sum(axis=0), jack, rtol=1e-6)
    # each split's deviations sum to zero over its folds: R (K - 1) directions
    np.testing.assert_allclose(basis.reshape(3, 5, *basis.shape[1:]).sum(axis=1), 0, atol=1e-9)
    with pytest.raises(ValidationError, match="grouped jackknife"):
        fold_deviations(PosteriorLift(rng=0).fit(x, s), x)


def _identity(prior: np.ndarray) -> Calibration:
    """A recalibration that changes nothing (slope 1, no curvature, no uncertainty)."""
    return Calibration(np.array([0.0, 1.0, 0.0]), np.eye(3) * 1e-14, prior)


def test_a_shared_error_widens_the_interval_a_record_error_does_not() -> None:
    """Every record has p(s=1 | x) = 0.6 against p(s=1) = 0.5, epsilon 0.5: a record breaks
    when its logit exceeds log(0.697 / 0.303) (s = 0's lift below -0.5), 0.43 nats above it.
    Independent errors of sd 0.2 per lift: about 8 % of the records break in every replicate,
    a narrow interval. The same error as a shift of the fitted model's logit shared by every
    record, sd 0.4 (0.2 per lift): in about 14 % of the replicates every record breaks, in the
    rest none, so the interval runs from none of the records to all of them."""
    n, eps = 2000, 0.5
    ll = np.tile(np.log([0.4 / 0.5, 0.6 / 0.5]), (n, 1))
    sd = np.full_like(ll, 0.2)
    codes = (np.arange(n) % 2).astype(np.int64)
    flags = margin_flags(ll, sd, eps)
    assert not flags.any()
    cal = _identity(np.array([0.5, 0.5]))
    alone = learned_breach(ll, sd, flags, codes, eps, calibration=cal, replicates=200, rng=3)
    basis = np.zeros((1, n, 2))
    basis[0] = [-0.2, 0.2]  # one direction: the logit of every record moves together
    shared = learned_breach(
        ll, sd, flags, codes, eps, calibration=cal, replicates=200, rng=3, shared=basis
    )
    assert alone.breach_probability == pytest.approx(0.08, abs=0.02)
    assert alone.breach_probability_ci[1] < 0.15
    assert shared.breach_probability == pytest.approx(0.14, abs=0.05)
    assert shared.breach_probability_ci[1] > 0.9  # every record breaks in the upper tail
    assert shared.breach_probability_ci[0] == 0.0  # most replicates: no record breaks
    with pytest.raises(ValidationError, match="shared"):
        learned_breach(ll, sd, flags, codes, eps, shared=basis[:, :10])


def test_the_record_level_watchdog_cross_fits_one_split_for_networks() -> None:
    """Issue #41 item 7: the networks' fits are the audit's cost, so the record-level watchdog
    cross-fits them on one split (5 fold models); the cheap families keep three (15)."""
    from privwatch.estimators import ClassifierLift
    from privwatch.watchdog import Watchdog

    g = np.random.default_rng(0)
    df = pd.DataFrame(g.standard_normal((300, 2)), columns=["u", "v"])
    df["s"] = (g.random(300) < 1 / (1 + np.exp(-df["u"]))).astype(int)
    fast = ClassifierLift(rng=0, epochs=3, n_ensemble=1, patience=2)
    for est, members in ((fast, 5), (PosteriorLift(rng=0), 15)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wd = Watchdog(epsilon=0.5, sensitive="s", observed=["u", "v"], estimator=est)
            wd.fit(df)
        fitted = wd.strategy_.estimator  # type: ignore[attr-defined]
        assert len(fitted.resamples_) == members
