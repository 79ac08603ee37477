"""Generator families of the location :class:`~privwatch.adversarial.Obfuscator`.

Each is a ``torch.nn.Module`` with ``forward(observed, noise)`` (one release per true location
and seed uniform on [0, 1)^noise_dim) and ``loss_terms(observed, noise, sensitive, classify)``
returning, per sample, the classifier's expected guess (rows of P(guess | observed)), the
expected displacement and the expected cross entropy of the true user — exact expectations over
the release where the family has a finite support, one sample otherwise.

Notation (Romanelli et al.): observed = W (true location), sensitive = X (user), release = Z,
guess = Y; the seed noise is u.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._torch import mlp, torch

__all__ = ["GENERATORS", "make_generator"]

GENERATORS = ("laplace", "anchors")

nn = torch.nn
F = nn.functional


class LaplaceGenerator(nn.Module):  # type: ignore[misc,name-defined]
    """z = w + gain * Laplace(u) + scale * h((w - centre) / scale, u).

    ``Laplace(u)`` is the exact planar Laplace of the initial epsilon as a function of the first
    three seed coordinates (Gamma(2) radius = -(ln u1 + ln u2) / epsilon, angle 2 pi u3); ``h``
    starts at zero, so G0 is exactly the planar Laplace (Romanelli et al. §V).
    """

    def __init__(self, hidden: tuple[int, ...], noise_dim: int) -> None:
        super().__init__()
        self.net = mlp(2 + noise_dim, hidden, 2)
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)
        self.gain = nn.Parameter(torch.ones(()))
        self.register_buffer("centre", torch.zeros(2))
        self.register_buffer("scale", torch.ones(()))
        self.register_buffer("epsilon", torch.ones(()))

    def forward(self, observed: Any, noise: Any) -> Any:
        u = noise
        r = -(torch.log1p(-u[:, 0]) + torch.log1p(-u[:, 1])) / self.epsilon
        theta = 2 * math.pi * u[:, 2]
        lap = torch.stack([r * torch.cos(theta), r * torch.sin(theta)], dim=1)
        h = self.net(torch.cat([(observed - self.centre) / self.scale, u], dim=1))
        return observed + self.gain * lap + self.scale * h

    def loss_terms(
        self, observed: Any, noise: Any, sensitive: Any, classify: Callable[[Any], Any]
    ) -> tuple[Any, Any, Any]:
        release = self(observed, noise)
        logits = classify(release)
        ce = F.cross_entropy(logits, sensitive, reduction="none")
        return torch.softmax(logits, dim=1), (release - observed).norm(dim=1), ce


class AnchorGenerator(nn.Module):  # type: ignore[misc,name-defined]
    r"""A release with finite support: the anchor a_k with probability

    .. math:: \pi_k(w) = \mathrm{softmax}_k\big(h((w - c)/s)_k - \lVert w - a_k\rVert / \tau\big)

    over ``n_anchors`` learned anchor points a_k (initialised on a grid over the training points'
    bounding box; tau = L / 5, so G0 releases anchors near w). The optimal mechanism on a grid
    uses few outputs, and a release concentrated on few points is what the grid estimator of
    the Bayes error (eq. 24-26) can measure; this family learns such releases directly. The
    generator loss takes the exact expectation over k (no sampling); the seed u[:, 0] picks k by
    the inverse CDF when releasing.
    """

    def __init__(self, hidden: tuple[int, ...], n_anchors: int) -> None:
        super().__init__()
        self.net = mlp(2, hidden, n_anchors)
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)
        # anchor positions in the normalised frame (w - centre) / scale, so that one optimiser
        # step moves an anchor by about lr * scale metres, as it moves the network's weights
        self.anchor_coords = nn.Parameter(torch.zeros(n_anchors, 2))
        self.register_buffer("centre", torch.zeros(2))
        self.register_buffer("scale", torch.ones(()))
        self.register_buffer("tau", torch.ones(()))

    @property
    def anchors(self) -> Any:
        """(n_anchors, 2) anchor points in metres."""
        return self.centre + self.scale * self.anchor_coords

    def probs(self, observed: Any) -> tuple[Any, Any]:
        """(n, n_anchors) release probabilities and distances to the anchors."""
        d = torch.cdist(observed, self.anchors)
        logits = self.net((observed - self.centre) / self.scale) - d / self.tau
        return torch.softmax(logits, dim=1), d

    def forward(self, observed: Any, noise: Any) -> Any:
        p, _ = self.probs(observed)
        k = (p.cumsum(dim=1) < noise[:, :1]).sum(dim=1).clamp(max=p.shape[1] - 1)
        return self.anchors[k]

    def loss_terms(
        self, observed: Any, noise: Any, sensitive: Any, classify: Callable[[Any], Any]
    ) -> tuple[Any, Any, Any]:
        p, d = self.probs(observed)
        log_post = torch.log_softmax(classify(self.anchors), dim=1)  # (n_anchors, n_users)
        guess = p @ log_post.exp()
        ce = -(p * log_post[:, sensitive].T).sum(dim=1)
        return guess, (p * d).sum(dim=1), ce


def _grid(points: Any, side: int) -> Any:
    """side x side points spanning the bounding box of ``points``."""
    lo, hi = points.min(dim=0).values, points.max(dim=0).values
    t = torch.linspace(0, 1, side)
    gx, gy = torch.meshgrid(lo[0] + t * (hi[0] - lo[0]), lo[1] + t * (hi[1] - lo[1]), indexing="xy")
    return torch.stack([gx.ravel(), gy.ravel()], dim=1)


def make_generator(
    kind: str,
    hidden: tuple[int, ...],
    *,
    noise_dim: int,
    anchor_grid: int,
    centre: Any = None,
    scale: float = 1.0,
    epsilon: float = 1.0,
    budget: float = 1.0,
    points: Any = None,
) -> Any:
    """Build a generator; with ``points`` (training locations, a float tensor) it is set to its
    G0 (planar Laplace of ``epsilon`` / anchors on an ``anchor_grid`` x ``anchor_grid`` grid
    with tau = budget / 5), without
    it only shaped for loading saved weights."""
    gen: Any = (
        LaplaceGenerator(hidden, noise_dim)
        if kind == "laplace"
        else AnchorGenerator(hidden, anchor_grid**2)
    )
    if points is None:
        return gen
    with torch.no_grad():
        gen.centre.copy_(torch.as_tensor(centre, dtype=torch.float32))
        gen.scale.fill_(scale)
        if kind == "laplace":
            gen.epsilon.fill_(epsilon)
        else:
            gen.anchor_coords.copy_((_grid(points, anchor_grid) - gen.centre) / gen.scale)
            gen.tau.fill_(budget / 5.0)
    return gen
