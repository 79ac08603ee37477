r"""Training a finite-support generator against the exact Bayes attacker (``attacker="bayes"``).

For a generator with finite support (``AnchorGenerator``) the release probabilities
:math:`\pi_k(w)` are known, so the joint pmf of user and release over a set of points
:math:`\{(w_i, x_i)\}_{i=1}^n` is exact,

.. math:: P_{X,Z}(x, k) = \frac1n \sum_{i: x_i = x} \pi_k(w_i),

and with it the leakage :math:`I(X; Z)` and the Bayes error :math:`1 - \sum_k \max_x
P_{X,Z}(x, k)` of the strongest attacker on those points (Romanelli et al. eq. 24 with the true
channel in place of the grid counts). This is eq. (18)-(21) of the paper with the classifier's
prediction replaced by the Bayes posterior of the current generator — the adversary the
classifier of Algorithm 1 only approximates — so no classifier is trained and the game becomes
plain gradient descent on

.. math:: \alpha\,\mathrm{softplus}(\mathbb{E}[d(W, Z)] - L') + \beta\, I(X; Z)

over all training points (full batch). The held-out check is the same as in Algorithm 1: after
every round of steps, the Bayes attacker's accuracy on the validation points (its own posterior,
fitted on them) and the displacement there; the generator kept is the most private within the
budget.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from ..estimators._torch_utils import adam, require_torch
from ._mi import batch_mutual_information

__all__ = ["exact_leakage", "train_against_bayes"]


def exact_leakage(probs: Any, onehot: Any) -> tuple[Any, Any]:
    """(I(X; Z) in nats, Bayes error) of release probabilities ``probs`` (n, K) for points of
    users ``onehot`` (n, |X|), under the empirical distribution of the points."""
    targets = onehot.to(probs.dtype)
    joint = targets.T @ probs / len(probs)  # (|X|, K)
    mi = batch_mutual_information(targets, probs, eps=1e-30)  # far anchors have p << 1e-12
    return mi, 1.0 - joint.max(dim=0).values.sum()


def train_against_bayes(
    gen: Any,
    train: tuple[Any, Any],
    val: tuple[Any, Any],
    n_users: int,
    *,
    target: float,
    budget: float,
    alpha: float,
    beta: float,
    lr: float,
    steps: int,
    max_iter: int,
    patience: int,
    on_round: Callable[[int, float, float, float, float], None],
) -> tuple[dict[str, Any], int, float]:
    """Descend the exact leakage for up to ``max_iter`` rounds of ``steps`` full-batch steps.

    ``on_round(round, train_accuracy, val_accuracy, val_distortion, val_mi)`` is called before
    each round's steps (it sees the generator the round's check measured, like Algorithm 1's
    classifier rounds) and may raise to stop. Returns (kept state, its round, its validation
    accuracy of the Bayes attacker).
    """
    torch = require_torch()
    w_tr, x_tr = train
    w_va, x_va = val
    oh_tr = torch.nn.functional.one_hot(x_tr, n_users).double()
    oh_va = torch.nn.functional.one_hot(x_va, n_users).double()
    opt = adam(gen.parameters(), lr)
    best_acc, best_state, best_it, stale = math.inf, copy.deepcopy(gen.state_dict()), 0, 0
    for it in range(1, max_iter + 1):
        with torch.no_grad():
            p_tr, _ = gen.probs(w_tr)
            p_va, d_va = gen.probs(w_va)
            _, be_tr = exact_leakage(p_tr.double(), oh_tr)
            mi_va, be_va = exact_leakage(p_va.double(), oh_va)
            val_dist = float((p_va * d_va).sum(dim=1).mean())
        val_acc = 1.0 - float(be_va)
        on_round(it, 1.0 - float(be_tr), val_acc, val_dist, float(mi_va))
        if val_acc < best_acc - 1e-6 and val_dist <= budget:
            best_acc, best_state, best_it, stale = val_acc, copy.deepcopy(gen.state_dict()), it, 0
        else:
            stale += 1
        if stale >= patience:
            break
        gen.train()
        for _ in range(steps):
            p, d = gen.probs(w_tr)
            mi, _ = exact_leakage(p.double(), oh_tr)
            dist = (p * d).sum(dim=1).mean()
            loss = alpha * torch.nn.functional.softplus(dist - target) + beta * mi.float()
            opt.zero_grad()
            loss.backward()
            opt.step()
        gen.eval()
    return best_state, best_it, best_acc
