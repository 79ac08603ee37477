from __future__ import annotations

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch import datasets as ds
from privwatch.datasets import COMPAS_OBSERVED, load_compas, random_channel, random_joint


def test_compas_filter_reproduces_paper_counts() -> None:
    raw = load_compas(filtered=False)
    assert len(raw) == 7214
    df = load_compas()
    assert len(df) == 5278  # Hsu et al. §IV-B
    assert (df["race_code"] == (df["race"] == "Caucasian")).all()
    assert set(COMPAS_OBSERVED) <= set(df.columns)
    assert df[COMPAS_OBSERVED].notna().all().all()
    assert (df["race"] == "African-American").sum() == 3175


def test_random_generators_are_seeded() -> None:
    assert np.array_equal(random_joint(3, 4, rng=5), random_joint(3, 4, rng=5))
    assert random_channel(4, 2, rng=1).sum(axis=1) == pytest.approx(np.ones(4))


def test_symmetric_pair_samples_follow_its_pmf() -> None:
    for observation, n_observed in (("useful", 4), ("full", 16)):
        d = ds.symmetric_pair(40_000, m=4, p=0.3, observation=observation, rng=0)
        assert d.pmf.shape == (4, n_observed, 4) and d.pmf.sum() == pytest.approx(1.0)
        assert np.abs(d.empirical_pmf() - d.pmf).max() < 0.01
        assert np.array_equal(d.pmf.sum(axis=1), d.pmf_sensitive_useful)
        identity = np.zeros((n_observed, 4))  # release the useful value: no distortion
        identity[np.arange(n_observed), np.arange(n_observed) % 4] = 1.0
        mi, distortion = d.evaluate(identity)
        assert distortion == pytest.approx(0.0) and mi == pytest.approx(d.optimum(0.0))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ds.symmetric_pair(-1), "`n` must be"),
        (lambda: ds.symmetric_pair(2.5), "`n` must be"),
        (lambda: ds.symmetric_pair(10, p="a"), "`p` must be"),
        (lambda: ds.symmetric_pair(10, m=10**7), "`m` asks for"),
        (lambda: ds.gaussian_pair(True, rho=0.5), "`n` must be"),
        (lambda: ds.gaussian_pair(5, rho=1j), "`rho` must be"),
        (lambda: ds.to_metres([np.nan], [2.0]), "`lat` must"),
        (lambda: ds.to_metres([48.0], []), "`lon` must"),
        (lambda: ds.to_metres([48.0], [2.0, 3.0]), "`lon` must"),
        (lambda: ds.uniform_prior(np.array([-1, 0])), "`users`"),
        (lambda: ds.uniform_prior(np.array([0.5])), "`users`"),
    ],
)
def test_generators_refuse_bad_arguments(call, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError, match=message):
        call()
