"""Synthetic data models of the PPAN experiments (Tripathy, Wang, Ishwar, Table I)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._memory import check_allocation
from .._rng import RNGLike, check_rng
from .._validation import check_probability
from ..exceptions import ValidationError

__all__ = ["SymmetricPair", "gaussian_pair", "symmetric_pair"]


@dataclass(frozen=True)
class SymmetricPair:
    """The symmetric pair (eq. 7) under one observation model, with samples.

    ``m``: alphabet size of the sensitive and the useful variable; ``p``: probability that the
    useful value differs from the sensitive one; ``observation``: ``"useful"`` (observed =
    useful) or ``"full"`` (observed = (sensitive, useful), coded ``s * m + u``);
    ``pmf_sensitive_useful[s, u]``: the pmf of the pair; ``pmf[s, x, u]``: the joint pmf of
    sensitive, observed and useful (the input of
    :func:`privwatch.mechanisms.optimal_privacy_mechanism`); ``sensitive``, ``observed``,
    ``useful``: ``n`` samples (integer codes).

    Notation: the PPAN paper writes X (sensitive), W (observed), Y (useful).
    """

    m: int
    p: float
    observation: str
    pmf_sensitive_useful: NDArray[np.float64]
    pmf: NDArray[np.float64]
    sensitive: NDArray[np.int64]
    observed: NDArray[np.int64]
    useful: NDArray[np.int64]

    def empirical_pmf(self) -> NDArray[np.float64]:
        """The plug-in estimate of ``pmf[s, x, u]`` from the samples (the conventional
        approach)."""
        counts = np.zeros_like(self.pmf)
        np.add.at(counts, (self.sensitive, self.observed, self.useful), 1.0)
        return np.asarray(counts / counts.sum(), dtype=np.float64)

    def evaluate(self, channel: NDArray[np.float64]) -> tuple[float, float]:
        """(I(S; Y) in nats, Pr[U != Y]) of ``channel[x, y]`` under the *true* pmf."""
        from ..measures import mutual_information

        k = channel / channel.sum(axis=1, keepdims=True)
        p_sy = self.pmf.sum(axis=2) @ k
        p_xu = self.pmf.sum(axis=0)
        distortion = float((p_xu @ (1 - np.eye(self.m)) * k).sum())
        return mutual_information(p_sy / p_sy.sum()), distortion

    def optimum(self, distortion: float) -> float:
        """The least leakage (nats) of any release within ``distortion``: eq. (30) / (31)."""
        from ..theory import symmetric_pair_optimum

        return symmetric_pair_optimum(
            min(max(distortion, 0.0), 1.0), m=self.m, p=self.p, observation=self.observation
        )


def symmetric_pair(
    n: int, *, m: int = 10, p: float = 0.4, observation: str = "useful", rng: RNGLike = None
) -> SymmetricPair:
    """``n`` samples of the symmetric pair: the sensitive value uniform on m values, the useful
    value equal to it w.p. 1 - p, otherwise uniform on the others (PPAN eq. 7, §III-A: m = 10,
    p = 0.4, 1,000 samples). The optimal tradeoff of this model is
    :func:`privwatch.theory.symmetric_pair_optimum`.

    >>> d = symmetric_pair(1000, rng=0)
    >>> d.pmf.shape, round(float(d.pmf_sensitive_useful.trace()), 6), bool(d.observed.max() < 10)
    ((10, 10, 10), 0.6, True)
    """
    n = _check_n(n)
    if isinstance(m, bool) or not (isinstance(m, (int, np.integer)) and m >= 2):
        raise ValidationError(f"`m` must be an int >= 2; got {m!r}.")
    m = int(m)
    p = check_probability(p, "p")
    if observation not in ("useful", "full"):
        raise ValidationError(f"`observation` must be 'useful' or 'full'; got {observation!r}.")
    n_observed = m if observation == "useful" else m * m
    check_allocation("m", (m, n_observed, m))
    check_allocation("n", (n, 3), np.int64)
    p_su = np.full((m, m), p / (m * (m - 1)))
    np.fill_diagonal(p_su, (1 - p) / m)
    ss, us = np.divmod(np.arange(m * m), m)
    xs = us if observation == "useful" else ss * m + us
    pmf = np.zeros((m, n_observed, m))
    pmf[ss, xs, us] = p_su.ravel()
    idx = check_rng(rng).choice(m * m, size=n, p=p_su.ravel())
    return SymmetricPair(m, p, observation, p_su, pmf, ss[idx], xs[idx], us[idx])


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValidationError(f"`n` must be a non-negative int (a number of samples); got {n!r}.")
    return int(n)


def gaussian_pair(
    n: int, *, rho: float | NDArray[np.float64], rng: RNGLike = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``n`` samples of (sensitive, useful) with unit variances and per-component correlation
    ``rho`` (scalar or vector; components independent): the Gaussian models of PPAN Table I.
    Returns ``(sensitive, useful)``, each of shape (n, len(rho)).

    >>> s, u = gaussian_pair(100_000, rho=0.85, rng=0)
    >>> round(float(np.corrcoef(s[:, 0], u[:, 0])[0, 1]), 2)
    0.85
    """
    n = _check_n(n)
    raw = np.atleast_1d(np.asarray(rho))
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size == 0:
        raise ValidationError(f"`rho` must be a number or a 1-d array in [-1, 1]; got {rho!r}.")
    r = raw.astype(np.float64)
    if not ((r >= -1) & (r <= 1)).all():
        raise ValidationError(f"`rho` must be in [-1, 1]; got {rho!r}.")
    check_allocation("n", (n, r.size, 2))
    g = check_rng(rng)
    s = g.standard_normal((n, r.size))
    u = r * s + np.sqrt(1 - r**2) * g.standard_normal((n, r.size))
    return s, u
