from __future__ import annotations

import numpy as np

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
    assert random_channel(4, 2, rng=1).sum(axis=1) == __import__("pytest").approx(np.ones(4))
