"""The cheaper search for large count tables (issue #18) gives the same release."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from privwatch.release import LiftBox, ReleaseNotMetWarning, find_release


def _worst_by_projection(box: LiftBox, cells: np.ndarray) -> np.ndarray:
    """The box's worst log-lift written out the long way: project, normalise, log, subtract."""
    proj = cells @ box.projection
    size = cells.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        post = np.where(size > 0, proj / np.where(size > 0, size, 1.0), box.prior)
        ll = np.log(post) - np.log(box.prior)
    return (np.abs(ll) if box.disclosure == "both" else ll).max(-1)


def test_box_worst_skips_the_identity_projection_bitwise() -> None:
    """One sensitive attribute: the projection (an identity matmul) is skipped and the log-lift
    computed in place; the held-out draws are scored bit for bit as the long way, and the
    caller's array is left untouched."""
    rng = np.random.default_rng(3)
    for n_s, disclosure in ((4, "both"), (3, "positive"), (2, "both")):
        box = LiftBox(rng.random(n_s) * 50 + 1, [np.arange(n_s)], 0.5, disclosure)
        cells = rng.integers(0, 30, (500, n_s)).astype(float)
        g = rng.gamma(cells[None] + 0.5, size=(7, *cells.shape))
        post = g / g.sum(-1, keepdims=True)
        kept = post.copy()
        assert np.array_equal(box.worst(post), _worst_by_projection(box, post))
        assert np.array_equal(post, kept)
        cells[3] = 0  # an empty cell takes the prior
        assert np.array_equal(box.worst(cells), _worst_by_projection(box, cells))
    # two sensitive attributes (joint + marginal projections)
    box = LiftBox(
        np.array([1.0, 2, 3, 4]), [np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])], 1, "both"
    )
    post = rng.dirichlet(np.ones(4), size=(3, 50))
    assert np.array_equal(box.worst(post), _worst_by_projection(box, post))


def _independent(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"s": rng.integers(0, 3, n), "a": rng.integers(0, 4, n), "b": rng.integers(0, 5, n)}
    )


def test_a_finest_valid_release_is_kept_and_its_local_value_is_the_bound() -> None:
    # many records per tuple, s independent of the tuple: the finest node meets epsilon, so
    # refining the all-* root locally is skipped (it cannot keep more information)
    df = _independent(40_000, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseNotMetWarning)
        r = find_release(df, "s", ["a", "b"], epsilon=0.5, folds=5, frontier_epsilons=[])
    finest = df.groupby(["a", "b"]).size().to_numpy() / len(df)
    entropy = float(-(finest * np.log(finest)).sum())
    assert r.method == "global" and r.suppressed_records == 0
    assert r.information_nats == r.information_global_nats == r.information_local_nats
    assert abs(r.information_nats - entropy) < 1e-12
    assert r.held_out is not None and r.held_out.n_records == len(df)
