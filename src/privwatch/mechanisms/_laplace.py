"""The planar Laplace mechanism of geo-indistinguishability (Andrés et al., CCS 2013)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import lambertw

from .._rng import RNGLike, check_rng
from .._validation import check_planar_points, check_positive
from ._base import Mechanism, Privacy

__all__ = ["PlanarLaplace"]


class PlanarLaplace(Mechanism):
    r"""Planar Laplace noise with parameter ``epsilon`` (per metre).

    .. math:: \mathcal{L}^\varepsilon_w(z) = \frac{\varepsilon^2}{2\pi} e^{-\varepsilon d(w, z)}

    Romanelli, Chatzikokolakis, Palamidessi eq. (27). The expected displacement is
    :math:`2/\varepsilon` (eq. 28). Sampling is exact: a uniform angle and the radius
    :math:`r = -\frac{1}{\varepsilon}\big(W_{-1}\big(\frac{p-1}{e}\big) + 1\big)`, p uniform on
    [0, 1), with :math:`W_{-1}` the lower branch of the Lambert W function. It guarantees
    ``epsilon``-geo-indistinguishability (:attr:`privacy`: ``geo_epsilon``, per metre). Its
    releases are continuous, so it has no finite :meth:`channel`.

    Notation: the paper's true location w is ``observed``, the reported z the release.

    Examples
    --------
    >>> PlanarLaplace.epsilon_for_distortion(200.0).epsilon
    0.01
    >>> PlanarLaplace(0.01).expected_distortion
    200.0
    >>> PlanarLaplace(0.01).release([[0.0, 0.0]], rng=0).shape
    (1, 2)
    """

    def __init__(self, epsilon: float) -> None:
        self.epsilon = check_positive(epsilon, "epsilon")

    @classmethod
    def epsilon_for_distortion(cls, distortion: float) -> PlanarLaplace:
        """The mechanism whose expected displacement is ``distortion`` metres (eq. 28)."""
        return cls(2.0 / check_positive(distortion, "distortion"))

    @property
    def expected_distortion(self) -> float:
        """E[d(observed, release)] = 2 / epsilon metres (eq. 28)."""
        return 2.0 / self.epsilon

    @property
    def privacy(self) -> Privacy:
        """``epsilon``-geo-indistinguishability (per metre), guaranteed."""
        return Privacy("geo_epsilon", self.epsilon, True)

    def radii(self, n: int, rng: RNGLike = None) -> NDArray[np.float64]:
        """``n`` exact draws of the displacement (a Gamma(2, 1/epsilon) variable)."""
        p = check_rng(rng).random(n)
        branch = lambertw((p - 1.0) / math.e, k=-1).real
        return np.asarray(-(branch + 1.0) / self.epsilon, dtype=np.float64)

    def release(self, observed: ArrayLike, rng: RNGLike = None) -> NDArray[np.float64]:
        """Obfuscate an (n, 2) array of planar coordinates in metres."""
        pts = check_planar_points(observed, "observed", allow_empty=True)
        g = check_rng(rng)
        theta = g.random(len(pts)) * 2.0 * math.pi
        r = self.radii(len(pts), g)
        return pts + np.column_stack([r * np.cos(theta), r * np.sin(theta)])

    def density(self, observed: ArrayLike, release: ArrayLike) -> NDArray[np.float64]:
        """Density of releasing ``release[i]`` from ``observed[i]`` (eq. 27), per square metre."""
        d = np.linalg.norm(np.asarray(release, float) - np.asarray(observed, float), axis=-1)
        return np.asarray(self.epsilon**2 / (2 * math.pi) * np.exp(-self.epsilon * d))

    def __repr__(self) -> str:
        return f"PlanarLaplace(epsilon={self.epsilon!r})"
