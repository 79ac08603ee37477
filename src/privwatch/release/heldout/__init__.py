"""The held-out check of a release and the verdict rule: how much of the population falls in a
released cell that breaks epsilon, with a 95 % interval, and whether the release is met.

- ``_prior.py``: the empirical-Bayes model of each tuple's p(s | x) (ridge main effects and a
  log-spline prior G of the tuples' spread around them, one per size stratum of the tuples);
- ``_posterior.py``: the tuples' posteriors under one or several fitted priors;
- ``_model.py``: :class:`HeldOutModel`, the model of one count table, fitted once and kept;
- ``_evaluation.py``: one release's cells evaluated under the model, and the interval's draws;
- ``_identified.py``: whether the records reject a prior with no mass inside the box (every
  tuple breaking); where they do not, the interval's upper end also counts the one-tuple cells
  under it;
- ``_beta_match.py``: a released cell's posterior share as a Beta (moment matching, the unseen
  pseudo-tuple, the mass outside the box);
- ``_breach.py``: :class:`HeldOut` (the figures) and :func:`estimate_breach` for given cells
  (:class:`BreachCheck`: the same in two steps, the point estimate first);
- ``_channel.py``: :func:`estimate_channel_breach`, the same figure for a release drawn through a
  fixed channel (randomized symbols), and :func:`tuple_breach`, each tuple's breach probability;
- ``_verdict.py``: the verdict rule (:func:`verdict_rule`, :func:`not_met_reasons`) and its
  constants (:data:`TOLERANCE`, :data:`FOLDS`, :data:`DRAWS`, :data:`REPLICATES`,
  :data:`NOTHING_KEPT`), used by the search, its alternatives, the audit and ``privwatch check``.

The check of a *searched* release (searched again on each fold's training folds) is
:func:`privwatch.release.search.held_out_check`.
"""

from ._breach import BreachCheck, HeldOut, estimate_breach, plugin_figures
from ._channel import estimate_channel_breach, tuple_breach
from ._evaluation import prefetch_model
from ._model import HeldOutModel, one_blas_thread
from ._verdict import (
    DRAWS,
    FOLDS,
    NOTHING_KEPT,
    REPLICATES,
    TOLERANCE,
    VERDICTS,
    Figures,
    Request,
    held_out_fails,
    held_out_verdict,
    not_met_reasons,
    verdict_rule,
)

__all__ = [
    "DRAWS",
    "FOLDS",
    "NOTHING_KEPT",
    "REPLICATES",
    "TOLERANCE",
    "VERDICTS",
    "BreachCheck",
    "Figures",
    "HeldOut",
    "HeldOutModel",
    "Request",
    "estimate_breach",
    "estimate_channel_breach",
    "held_out_fails",
    "held_out_verdict",
    "not_met_reasons",
    "one_blas_thread",
    "plugin_figures",
    "prefetch_model",
    "tuple_breach",
    "verdict_rule",
]
