"""Classic and exactly optimal release mechanisms.

Every mechanism is a :class:`Mechanism`: ``release(observed, rng=None)`` draws releases,
``channel()`` gives the exact dense ``k[x, y]`` (rows: observed values, columns: releases) where
the output alphabet is finite, and ``privacy`` states what it guarantees or was measured at.
Joint pmfs are ``p[s, x]`` (or ``p[s, x, u]`` with the useful variable last); cost matrices are
``distance[x, y]`` (or ``distance[u, y]``); the expected cost is the ``distortion`` and its limit
the ``budget``.
"""

from ._base import FiniteMechanism, Mechanism, Privacy

# the check of integer codes, shared with release.Generalisation (re-exported, not in __all__)
from ._base import check_codes as check_codes
from ._laplace import PlanarLaplace
from ._lift_channel import (
    LiftChannel,
    lift_channel,
    lift_channel_refuses,
    release_information,
    symbol_log_lift,
)
from ._optimal_bayes import OptimalBayesResult, optimal_bayes_mechanism
from ._optimal_privacy import OptimalPrivacyResult, optimal_privacy_mechanism
from ._randomized_response import RandomizedResponse

__all__ = [
    "FiniteMechanism",
    "LiftChannel",
    "Mechanism",
    "OptimalBayesResult",
    "OptimalPrivacyResult",
    "PlanarLaplace",
    "Privacy",
    "RandomizedResponse",
    "lift_channel",
    "lift_channel_refuses",
    "optimal_bayes_mechanism",
    "optimal_privacy_mechanism",
    "release_information",
    "symbol_log_lift",
]
