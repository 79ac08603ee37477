"""Synthetic data models of the PPAN experiments (Tripathy, Wang, Ishwar, Table I)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._rng import RNGLike, check_rng
from ..exceptions import ValidationError

__all__ = ["SymmetricPair", "gaussian_pair", "symmetric_pair"]


@dataclass(frozen=True)
class SymmetricPair:
    """The symmetric pair (eq. 7) under one observation model.

    ``p_xy[x, y]``: the pmf; ``p_wxy[w, x, y]``: the joint of observation, sensitive and useful
    (``observation="useful"``: w = y; ``"full"``: w = x * m + y); ``x``, ``y``, ``w``: samples.
    """

    m: int
    p: float
    observation: str
    p_xy: NDArray[np.float64]
    p_wxy: NDArray[np.float64]
    w: NDArray[np.int64]
    x: NDArray[np.int64]
    y: NDArray[np.int64]

    def empirical_p_wxy(self) -> NDArray[np.float64]:
        """The plug-in estimate of ``p_wxy`` from the samples (the conventional approach)."""
        counts = np.zeros_like(self.p_wxy)
        np.add.at(counts, (self.w, self.x, self.y), 1.0)
        return np.asarray(counts / counts.sum(), dtype=np.float64)

    def evaluate(self, channel: NDArray[np.float64]) -> tuple[float, float]:
        """(I(X; Z) in nats, Pr[Y != Z]) of ``channel[w, z]`` under the *true* pmf."""
        from ..measures import mutual_information

        k = channel / channel.sum(axis=1, keepdims=True)
        p_xz = self.p_wxy.sum(axis=2).T @ k
        distortion = float((self.p_wxy.sum(axis=1) @ (1 - np.eye(self.m)) * k).sum())
        return mutual_information(p_xz / p_xz.sum()), distortion

    def optimum(self, distortion: float) -> float:
        """The least leakage (nats) of any release within ``distortion``: eq. (30) / (31)."""
        from ..theory import symmetric_pair as optimal_leakage

        return optimal_leakage(
            min(max(distortion, 0.0), 1.0), m=self.m, p=self.p, observation=self.observation
        )


def symmetric_pair(
    n: int, *, m: int = 10, p: float = 0.4, observation: str = "useful", rng: RNGLike = None
) -> SymmetricPair:
    """``n`` samples of the symmetric pair: X uniform on m values, Y = X w.p. 1 - p, otherwise
    uniform on the others (PPAN eq. 7, §III-A: m = 10, p = 0.4, 1,000 samples).

    >>> d = symmetric_pair(1000, rng=0)
    >>> d.p_wxy.shape, round(float(d.p_xy.trace()), 6), bool(d.w.max() < 10)
    ((10, 10, 10), 0.6, True)
    """
    if not (isinstance(m, int) and m >= 2):
        raise ValidationError(f"`m` must be an int >= 2; got {m!r}.")
    if not 0 <= p <= 1:
        raise ValidationError(f"`p` must be in [0, 1]; got {p!r}.")
    if observation not in ("useful", "full"):
        raise ValidationError(f"`observation` must be 'useful' or 'full'; got {observation!r}.")
    p_xy = np.full((m, m), p / (m * (m - 1)))
    np.fill_diagonal(p_xy, (1 - p) / m)
    xs, ys = np.divmod(np.arange(m * m), m)
    ws = ys if observation == "useful" else xs * m + ys
    p_wxy = np.zeros((m if observation == "useful" else m * m, m, m))
    p_wxy[ws, xs, ys] = p_xy.ravel()
    idx = check_rng(rng).choice(m * m, size=n, p=p_xy.ravel())
    return SymmetricPair(m, p, observation, p_xy, p_wxy, ws[idx], xs[idx], ys[idx])


def gaussian_pair(
    n: int, *, rho: float | NDArray[np.float64], rng: RNGLike = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``n`` samples of (X, Y) with unit variances and per-component correlation ``rho`` (scalar
    or vector; components independent): the Gaussian models of PPAN Table I.

    >>> x, y = gaussian_pair(100_000, rho=0.85, rng=0)
    >>> round(float(np.corrcoef(x[:, 0], y[:, 0])[0, 1]), 2)
    0.85
    """
    r = np.atleast_1d(np.asarray(rho, dtype=np.float64))
    if not ((r >= -1) & (r <= 1)).all():
        raise ValidationError(f"`rho` must be in [-1, 1]; got {rho!r}.")
    g = check_rng(rng)
    x = g.standard_normal((n, r.size))
    y = r * x + np.sqrt(1 - r**2) * g.standard_normal((n, r.size))
    return x, y
