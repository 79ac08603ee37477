"""Release mechanisms, adversaries and distortions for PPAN (Tripathy, Wang, Ishwar §II-C).

Every mechanism is a ``torch.nn.Module`` with ``release(observed, generator)`` returning either
a sampled release (continuous families) or the full conditional P(release | observed) (the
finite-alphabet matrix, ``exact = True``: the loss takes the expectation of eq. (6) instead of
sampling). Every adversary maps a release to ``log_likelihood(sensitive, release)``, the log of
its posterior at the true sensitive value. Distortions are ``distortion(useful, release)`` per
sample.

Notation (Tripathy, Wang, Ishwar): observed = W, sensitive = X, useful = Y, release = Z; the
adversary's posterior is Q(x | z).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._torch import mlp, torch

__all__ = [
    "CategoricalAdversary",
    "FactoredMechanism",
    "GaussianAdversary",
    "GaussianMechanism",
    "GaussianMixtureMechanism",
    "MatrixMechanism",
    "SeedNoiseMechanism",
    "hamming",
    "pixel_cross_entropy",
    "squared_error",
]

nn = torch.nn


class MatrixMechanism(nn.Module):  # type: ignore[misc,name-defined]
    """Finite alphabets: P(release | observed) = softmax(G[observed]) for observed codes
    0..n_observed-1 (one linear layer on the one-hot observation, no bias, §III-A1).
    ``release`` returns the (n, n_outputs) matrix of P(. | observed_i)."""

    exact = True

    def __init__(self, n_observed: int, n_outputs: int) -> None:
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(n_observed, n_outputs))

    def release(self, observed: Any, generator: Any = None) -> Any:
        return torch.softmax(self.logits[observed], dim=1)

    def channel(self) -> Any:
        """The (n_observed, n_outputs) row-stochastic matrix of the mechanism."""
        with torch.no_grad():
            return torch.softmax(self.logits, dim=1)


def factored_logits(factors: Sequence[Any], interaction: Any, codes: Any) -> Any:
    """C[o] + sum_j A_j[o_j] for every observed cell o (``codes[o]`` = its attribute values);
    the tables may carry leading batch axes, e.g. (models, n_values, n_outputs) for stacked
    fits."""
    out = interaction
    for j, table in enumerate(factors):
        out = out + table[..., codes[:, j], :]
    return out


class FactoredMechanism(nn.Module):  # type: ignore[misc,name-defined]
    r"""Finite alphabets, the observation a tuple of attributes (o_1, ..., o_k) with sizes
    ``shape`` and o its flat (row-major) code: P(release | o) = softmax(sum_j A_j[o_j] + C[o]).

    As expressive as :class:`MatrixMechanism` (C alone is the full matrix), but cells that share
    an attribute value share A_j: a cell seen rarely or never in training borrows what the
    others learned instead of keeping its initial row (uniform release). For the full-data
    symmetric pair (observed = (sensitive, useful)) this is what brings PPAN within 0.03 nats
    of the optimum on 1,000 samples (experiments/tripathy2019_symmetric_pair). All parameters
    start at 0 (uniform).
    """

    exact = True

    def __init__(self, shape: Sequence[int], n_outputs: int) -> None:
        super().__init__()
        self.shape = tuple(int(s) for s in shape)
        self.factors = nn.ParameterList(
            [nn.Parameter(torch.zeros(s, n_outputs)) for s in self.shape]
        )
        self.interaction = nn.Parameter(torch.zeros(math.prod(self.shape), n_outputs))
        codes = torch.cartesian_prod(*(torch.arange(s) for s in self.shape))
        self.register_buffer("codes", codes.reshape(-1, len(self.shape)))

    @property
    def logits(self) -> Any:
        """(n_observed, n_outputs) logits of every cell."""
        return factored_logits(list(self.factors), self.interaction, self.codes)

    def release(self, observed: Any, generator: Any = None) -> Any:
        return torch.softmax(self.logits[observed], dim=1)

    def channel(self) -> Any:
        """The (n_observed, n_outputs) row-stochastic matrix of the mechanism."""
        with torch.no_grad():
            return torch.softmax(self.logits, dim=1)


class GaussianMechanism(nn.Module):  # type: ignore[misc,name-defined]
    """release = mu(observed) + sigma(observed) * eps, eps ~ N(0, I): the reparameterisation
    trick (§II-C2)."""

    exact = False

    def __init__(self, n_in: int, n_out: int, hidden: Sequence[int] = (20, 20)) -> None:
        super().__init__()
        self.net = mlp(n_in, hidden, 2 * n_out)
        self.n_out = n_out

    def draw_noise(self, n: int, generator: Any = None, device: Any = None) -> Any:
        """The noise eps of ``n`` releases, (n, n_out), drawn as :meth:`release` draws it."""
        return torch.randn((n, self.n_out), generator=generator, device=device)

    def release_from(self, observed: Any, noise: Any) -> Any:
        """The release for given noise (see :meth:`draw_noise`); no random draw."""
        out = self.net(observed)
        mu, log_sigma = out[..., : self.n_out], out[..., self.n_out :]
        return mu + torch.exp(log_sigma) * noise

    def release(self, observed: Any, generator: Any = None) -> Any:
        noise = self.draw_noise(observed.shape[0], generator, observed.device)
        return self.release_from(observed, noise)


class GaussianMixtureMechanism(nn.Module):  # type: ignore[misc,name-defined]
    r"""Gaussian-mixture release (App. F): a network maps the observation to ``n_components``
    components :math:`(\mu_l, \sigma_l, \pi_l)`; component l releases
    :math:`z_l = \mu_l + \sigma_l \odot u_l`, :math:`u_l \sim N(0, I)` (the
    reparameterisation of §II-C2 with a diagonal :math:`A_l`), chosen with probability
    :math:`\pi_l`.

    For training, :meth:`components` returns every :math:`z_l` with the weights
    :math:`\pi_l`, and PPAN takes the exact expectation over the component of eq. (29),

    .. math:: \mathcal{L}^i = \sum_{l=1}^m \pi_{l,i}\,\big(\log Q(x_i \mid z_{l,i})
              + \lambda\, d(y_i, z_{l,i})\big),

    so the weights get gradients without sampling a discrete choice. :meth:`release` samples
    the mixture (a component by its weight, then its Gaussian).
    """

    exact = False

    def __init__(
        self, n_in: int, n_out: int, n_components: int = 2, hidden: Sequence[int] = (20, 20)
    ) -> None:
        super().__init__()
        self.net = mlp(n_in, hidden, n_components * (2 * n_out + 1))
        self.n_out, self.n_components = n_out, n_components

    def mixture(self, observed: Any) -> tuple[Any, Any, Any]:
        """(mu, sigma, pi) per sample: (n, m, n_out), (n, m, n_out), (n, m)."""
        out = self.net(observed).view(-1, self.n_components, 2 * self.n_out + 1)
        k = self.n_out
        sigma = torch.exp(out[..., k : 2 * k].clamp(-12.0, 12.0))
        return out[..., :k], sigma, torch.softmax(out[..., -1], dim=1)

    def draw_noise(self, n: int, generator: Any = None, device: Any = None) -> Any:
        """The noise of ``n`` samples of every component, (n, m, n_out), drawn as
        :meth:`components` draws it."""
        shape = (n, self.n_components, self.n_out)
        return torch.randn(shape, generator=generator, device=device)

    def components_from(self, observed: Any, noise: Any) -> tuple[Any, Any]:
        """:meth:`components` for given noise (see :meth:`draw_noise`); no random draw."""
        mu, sigma, pi = self.mixture(observed)
        return mu + sigma * noise, pi

    def components(self, observed: Any, generator: Any = None) -> tuple[Any, Any]:
        """One reparameterised sample of every component, (n, m, n_out), and the weights
        (n, m)."""
        noise = self.draw_noise(observed.shape[0], generator, observed.device)
        return self.components_from(observed, noise)

    def release(self, observed: Any, generator: Any = None) -> Any:
        z, pi = self.components(observed, generator)
        pick = torch.multinomial(pi, 1, generator=generator)  # (n, 1)
        return z.gather(1, pick[:, :, None].expand(-1, 1, z.shape[2])).squeeze(1)


def over_components(fn: Any, target: Any, release: Any) -> Any:
    """Per-sample ``fn(target, release)``; for a mixture release ``(z, pi)`` (see
    :meth:`GaussianMixtureMechanism.components`) the expectation over its components,
    sum_l pi_l fn(target, z_l) (eq. 29)."""
    if not isinstance(release, tuple):
        return fn(target, release)
    z, pi = release
    n, m = pi.shape
    flat = fn(target.repeat_interleave(m, dim=0), z.reshape(n * m, -1))
    return (pi * flat.reshape(n, m)).sum(dim=1)


class SeedNoiseMechanism(nn.Module):  # type: ignore[misc,name-defined]
    """release = f(observed, u) with seed noise u ~ Uniform[-1, 1]^noise_dim: a universal
    approximator of
    release distributions (§II-C3). ``activation``: relu (the paper's), tanh, elu or softplus;
    with very narrow layers a smooth activation avoids dead units that cut the seed noise off."""

    exact = False

    def __init__(
        self,
        n_in: int,
        n_out: int,
        hidden: Sequence[int] = (20, 20),
        noise_dim: int = 1,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.net = mlp(n_in + noise_dim, hidden, n_out, activation=activation)
        self.noise_dim = noise_dim

    def draw_noise(self, n: int, generator: Any = None, device: Any = None) -> Any:
        """The seeds of ``n`` releases, uniform on [0, 1) (:meth:`release_from` maps them to
        [-1, 1)), drawn as :meth:`release` draws them."""
        return torch.rand((n, self.noise_dim), generator=generator, device=device)

    def release_from(self, observed: Any, noise: Any) -> Any:
        """The release for given seeds (see :meth:`draw_noise`); no random draw."""
        return self.net(torch.cat([observed, 2 * noise - 1], dim=-1))

    def release(self, observed: Any, generator: Any = None) -> Any:
        noise = self.draw_noise(observed.shape[0], generator, observed.device)
        return self.release_from(observed, noise)


class CategoricalAdversary(nn.Module):  # type: ignore[misc,name-defined]
    """Posterior of a finite sensitive attribute given the release: softmax(net(release)). For
    a finite release alphabet (releases given as rows of P(release | observed) or one-hot),
    ``hidden=()`` and no bias is the paper's matrix A (§III-A1)."""

    def __init__(
        self,
        n_in: int,
        n_classes: int,
        hidden: Sequence[int] = (),
        bias: bool | None = None,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        if not hidden and not bias:
            self.net = nn.Linear(n_in, n_classes, bias=bool(bias))
        else:
            self.net = mlp(n_in, hidden, n_classes, activation=activation)

    def log_posterior(self, release: Any) -> Any:
        """(n, n_classes) log-posterior of every sensitive value given each release."""
        return torch.log_softmax(self.net(release), dim=1)

    def log_likelihood(self, sensitive: Any, release: Any) -> Any:
        """Per-sample log-posterior of the true ``sensitive`` code."""
        return self.log_posterior(release).gather(1, sensitive.view(-1, 1)).squeeze(1)


class GaussianAdversary(nn.Module):  # type: ignore[misc,name-defined]
    """Posterior N(sensitive; mu(release), diag(sigma^2(release))) of a continuous sensitive
    vector, (mu, log sigma^2) from a network (§III-B)."""

    def __init__(
        self,
        n_in: int,
        n_sensitive: int,
        hidden: Sequence[int] = (20, 20),
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.net = mlp(n_in, hidden, 2 * n_sensitive, activation=activation)
        self.n_sensitive = n_sensitive

    def log_likelihood(self, sensitive: Any, release: Any) -> Any:
        """Per-sample log-density of the true ``sensitive`` vector."""
        out = self.net(release)
        k = self.n_sensitive
        mu, log_var = out[:, :k], out[:, k:].clamp(-12.0, 12.0)
        sq = (sensitive - mu) ** 2 / log_var.exp()
        return (-0.5 * (math.log(2 * math.pi) + log_var + sq)).sum(1)


def hamming(table: Any) -> Any:
    """Distortion for finite alphabets from a ``table[useful, release]`` (e.g. 1 - eye(m) for
    Pr[useful != release]): returns ``distortion(useful, release_probs)``, the expected
    distortion per sample under the rows P(release | observed)."""
    d = torch.as_tensor(table, dtype=torch.float32)
    on_device = {d.device: d}  # the table copied once to each device it is used on

    def distortion(useful: Any, release: Any) -> Any:
        here = on_device.get(release.device)
        if here is None:
            here = on_device[release.device] = d.to(release.device)
        return (release * here[useful]).sum(dim=1)

    return distortion


def squared_error(useful: Any, release: Any) -> Any:
    """||useful - release||^2 per sample."""
    return ((useful - release) ** 2).sum(dim=1)


def pixel_cross_entropy(useful: Any, release: Any) -> Any:
    """Binary cross entropy of the useful pixels in [0, 1] under the released pixels in [0, 1],
    summed over pixels (the image distortion of §III-C)."""
    z = release.clamp(1e-6, 1 - 1e-6)
    return -(useful * z.log() + (1 - useful) * (1 - z).log()).sum(dim=1)
