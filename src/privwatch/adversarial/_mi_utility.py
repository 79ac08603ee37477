r"""Mutual-information utility for PPAN (Tripathy, Wang, Ishwar App. D): privacy funnel and
information bottleneck.

With the conditional entropy h(useful | release) as the distortion, the utility is
I(useful; release) (h(useful) is fixed), bounded variationally through a second posterior
:math:`Q(u \mid r)`: for every Q, :math:`H(U \mid R) \le -\mathbb{E}\log Q(U \mid R)`, with
equality at the true posterior. PPAN's Lagrangian game then becomes App. D's

.. math:: \min_{P_{R|O},\,Q_{U|R}} \max_{Q_{S|R}}
          \mathbb{E}\log Q_{S|R}(S \mid R) - \lambda\,\mathbb{E}\log Q_{U|R}(U \mid R),

the privacy funnel (Makhdoumi et al.) when observed = useful, the information bottleneck
(Tishby et al.) when observed = sensitive. At the optimal posteriors the objective is
:math:`I(S;R) - \lambda I(U;R) - H(S) + \lambda H(U)`, so the game minimises
:math:`I(S;R) - \lambda I(U;R)`.

Use :class:`UsefulPosterior` as PPAN's ``distortion`` with ``penalty="lagrangian"``; PPAN
trains a copy of it together with the mechanism (the min over :math:`Q_{U|R}`).

Notation (Tripathy, Wang, Ishwar): observed = W, sensitive = X, useful = Y, release = Z;
the second posterior is Q_{Y|Z}.
"""

from __future__ import annotations

from typing import Any

from .._torch import torch
from ..exceptions import ValidationError

__all__ = ["UsefulPosterior"]


class UsefulPosterior(torch.nn.Module):  # type: ignore[misc]
    r"""The distortion :math:`d(u, r) = -\log Q(u \mid r)` of a learned posterior of the useful
    value given the release (App. D), for PPAN's ``distortion`` argument.

    Parameters
    ----------
    posterior : torch module
        A posterior of the useful value given a release with ``log_likelihood(useful,
        release)`` (:class:`CategoricalAdversary` for a finite useful alphabet,
        :class:`GaussianAdversary` for a real vector: then the bound is on h(U | R)).
    finite : bool
        True when PPAN's mechanism is finite (``MatrixMechanism`` / ``FactoredMechanism``):
        the release arrives as the rows :math:`P(\cdot \mid o_i)` over ``n_outputs`` symbols and
        the distortion is the exact expectation :math:`-\sum_r P(r \mid o_i) \log Q(u_i \mid r)`
        (as eq. 6 does for the adversary); ``posterior`` then needs ``log_posterior`` (a
        ``CategoricalAdversary(n_outputs, n_useful)``). False: the release is a sample.
    """

    def __init__(self, posterior: Any, *, finite: bool = False) -> None:
        super().__init__()
        if finite and not hasattr(posterior, "log_posterior"):
            raise ValidationError(
                "`posterior` must have log_posterior (a CategoricalAdversary) when `finite` is "
                f"True; got {type(posterior).__name__}."
            )
        self.posterior = posterior
        self.finite = finite

    def forward(self, useful: Any, release: Any) -> Any:
        """Per-sample :math:`-\\log Q(u_i \\mid r_i)` (or its expectation over the rows of a
        finite release)."""
        if self.finite:
            n_out = release.shape[1]
            log_post = self.posterior.log_posterior(torch.eye(n_out, device=release.device))
            return -(release * log_post[:, useful].T).sum(dim=1)
        return -self.posterior.log_likelihood(useful, release)
