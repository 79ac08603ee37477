"""Location data of Romanelli, Chatzikokolakis, Palamidessi §IV-V: the synthetic 4-user set and
the Gowalla check-ins around 5 Boulevard de Sébastopol, Paris, in metres on a local tangent plane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._memory import check_allocation
from .._rng import RNGLike, check_rng
from ..exceptions import ValidationError

__all__ = [
    "CENTER",
    "LocationData",
    "load_gowalla_paris",
    "synthetic_users",
    "to_metres",
    "uniform_prior",
]

#: 5 Boulevard de Sébastopol, Paris (latitude, longitude).
CENTER = (48.8586, 2.3477)
EARTH_RADIUS = 6_371_000.0
#: Half-side of the paper's normalisation square (6.5 km side): metres / NORM is in [-1, 1].
NORM = 3250.0


def _degrees(values: ArrayLike, name: str, limit: float) -> NDArray[np.float64]:
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size == 0:
        raise ValidationError(
            f"`{name}` must be a non-empty 1-d array of degrees; got dtype {raw.dtype}, "
            f"shape {raw.shape}."
        )
    out = raw.astype(np.float64)
    if not (np.isfinite(out).all() and (np.abs(out) <= limit).all()):
        raise ValidationError(
            f"`{name}` must hold finite degrees in [-{limit:g}, {limit:g}]; got "
            f"{out[~(np.isfinite(out) & (np.abs(out) <= limit))][0]!r}."
        )
    return out


def to_metres(lat: ArrayLike, lon: ArrayLike) -> NDArray[np.float64]:
    """Equirectangular projection around :data:`CENTER`: (east, north) in metres, shape (n, 2).

    >>> to_metres([48.8586], [2.3477]).tolist()
    [[0.0, 0.0]]
    """
    la = _degrees(lat, "lat", 90.0)
    lo = _degrees(lon, "lon", 180.0)
    if la.shape != lo.shape:
        raise ValidationError(
            f"`lon` must have as many values as `lat` ({la.size}); got {lo.size}."
        )
    lat0, lon0 = (math.radians(v) for v in CENTER)
    east = EARTH_RADIUS * math.cos(lat0) * (np.radians(lo) - lon0)
    north = EARTH_RADIUS * (np.radians(la) - lat0)
    return np.column_stack([east, north])


def uniform_prior(users: NDArray[np.int64]) -> NDArray[np.float64]:
    """Joint pmf ``prior[user, i]`` of user and location for the points ``i`` labelled
    ``users[i]`` (0 .. n_users - 1), each point with mass 1 / n: the ``prior`` of
    :func:`privwatch.mechanisms.optimal_bayes_mechanism` for a set of check-ins.

    >>> uniform_prior(np.array([0, 1, 1])).round(3).tolist()
    [[0.333, 0.0, 0.0], [0.0, 0.333, 0.333]]
    """
    lab = np.asarray(users)
    if lab.dtype.kind not in "iu" or lab.ndim != 1 or lab.size == 0 or lab.min() < 0:
        raise ValidationError(
            f"`users` must be a non-empty 1-d array of non-negative integer labels; got dtype "
            f"{lab.dtype}, shape {lab.shape}."
        )
    check_allocation("users", (int(lab.max()) + 1, lab.size))
    prior = np.zeros((int(lab.max()) + 1, len(lab)))
    prior[lab, np.arange(len(lab))] = 1.0 / len(lab)
    return prior


def _split(groups: list[NDArray[np.float64]], n_train: int) -> LocationData:
    """Per user (label = position in ``groups``): the first ``n_train`` points train, the rest
    test."""
    train = [pts[:n_train] for pts in groups]
    test = [pts[n_train:] for pts in groups]
    return LocationData(
        np.vstack(train),
        np.concatenate([np.full(len(p), u) for u, p in enumerate(train)]),
        np.vstack(test),
        np.concatenate([np.full(len(p), u) for u, p in enumerate(test)]),
    )


@dataclass(frozen=True)
class LocationData:
    """Train / test locations (the observed values: metres, (n, 2)) with their users (the
    sensitive values: labels 0 .. n_users - 1) in ``train_sensitive`` / ``test_sensitive``."""

    train: NDArray[np.float64]
    train_sensitive: NDArray[np.int64]
    test: NDArray[np.float64]
    test_sensitive: NDArray[np.int64]

    def normalized(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Train and test coordinates in the paper's [-1, 1] normalisation (6.5 km square)."""
        return self.train / NORM, self.test / NORM


def synthetic_users(
    *,
    n_per_user: int = 600,
    n_train: int = 480,
    radius: float = 45.0,
    side: float = 300.0,
    rng: RNGLike = None,
) -> LocationData:
    """Four users, each a cloud of points within ``radius`` metres of one vertex of a
    ``side`` x ``side`` square centred on :data:`CENTER` (§IV: 600 points per user, 480 / 120).

    Points are uniform over the disc of radius ``radius`` around the vertex.

    >>> d = synthetic_users(rng=0)
    >>> d.train.shape, d.test.shape, np.bincount(d.test_sensitive).tolist()
    ((1920, 2), (480, 2), [120, 120, 120, 120])
    """
    g = check_rng(rng)
    h = side / 2
    vertices = np.array([[-h, h], [h, h], [-h, -h], [h, -h]])
    groups = []
    for v in vertices:
        r = radius * np.sqrt(g.random(n_per_user))
        t = g.random(n_per_user) * 2 * math.pi
        groups.append(v + np.column_stack([r * np.cos(t), r * np.sin(t)]))
    return _split(groups, n_train)


def load_gowalla_paris(
    *,
    side: float = 4500.0,
    n_users: int = 6,
    n_train: int = 82,
    n_test: int = 20,
    rng: RNGLike = None,
) -> LocationData:
    """Gowalla check-ins (bundled) in a ``side`` metre square centred on :data:`CENTER`; the
    ``n_users`` users with most check-ins there; per user ``n_train`` + ``n_test`` check-ins drawn
    at random without replacement (§V).

    The paper's "filtered to reduce the overlapping" is, by its own description, this random
    per-user subsampling; nothing else is filtered here. Users are labelled by decreasing number of
    check-ins.
    """
    path = resources.files("privwatch.datasets").joinpath("data/gowalla-paris-checkins.txt.gz")
    with path.open("rb") as fh:
        df = pd.read_csv(
            fh,
            sep="\t",
            header=None,
            compression="gzip",
            names=["user", "time", "lat", "lon", "location"],
        )
    xy = to_metres(df["lat"].to_numpy(), df["lon"].to_numpy())
    inside = (np.abs(xy) <= side / 2).all(axis=1)
    rows = np.flatnonzero(inside)
    df, xy = df.iloc[rows], xy[rows]
    top = df["user"].value_counts().head(n_users)
    g = check_rng(rng)
    groups = []
    for user in top.index:
        pts = xy[(df["user"] == user).to_numpy()]
        groups.append(pts[g.choice(len(pts), size=min(len(pts), n_train + n_test), replace=False)])
    return _split(groups, n_train)
