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

Notation (Romanelli et al.): observed = W (true location), sensitive = X (user), release = Z.
"""

from __future__ import annotations

from typing import Any

from .._torch import adam, torch
from .._trainer import Trainer
from ._mi import batch_mutual_information

__all__ = ["BayesGame", "exact_leakage"]


def exact_leakage(probs: Any, onehot: Any) -> tuple[Any, Any]:
    """(I(sensitive; release) in nats, Bayes error) of release probabilities ``probs`` (n, K)
    for points of users ``onehot`` (n, n_users), under the empirical distribution of the
    points."""
    targets = onehot.to(probs.dtype)
    joint = targets.T @ probs / len(probs)  # (n_users, K)
    mi = batch_mutual_information(targets, probs, eps=1e-30)  # far anchors have p << 1e-12
    return mi, 1.0 - joint.max(dim=0).values.sum()


class BayesGame(Trainer):
    """Descend the exact leakage: per epoch, ``generator_epochs`` full-batch steps (from the
    second epoch on), then the check — the Bayes attacker's accuracy on the training and the
    validation points, and the displacement there — so that each record measures the generator
    the next steps start from, as in Algorithm 1's classifier rounds."""

    def __init__(
        self,
        obfuscator: Any,
        gen: Any,
        train: tuple[Any, Any],
        validation: tuple[Any, Any],
        *,
        n_users: int,
        target: float,
        stopping: list[Any],
    ) -> None:
        super().__init__(obfuscator, epochs=obfuscator.max_iter, callbacks=stopping)
        self.gen, self.target = gen, target
        self.train_points, self.val_points = train[0], validation[0]
        self.train_onehot = torch.nn.functional.one_hot(train[1], n_users).double()
        self.val_onehot = torch.nn.functional.one_hot(validation[1], n_users).double()
        self.opt = adam(gen.parameters(), obfuscator.generator_lr)

    def _descend(self) -> None:
        obf = self.model
        self.gen.train()
        for _ in range(obf.generator_epochs):
            p, d = self.gen.probs(self.train_points)
            mi, _ = exact_leakage(p.double(), self.train_onehot)
            dist = (p * d).sum(dim=1).mean()
            softplus = torch.nn.functional.softplus(dist - self.target)
            loss = obf.alpha * softplus + obf.beta * mi.float()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        self.gen.eval()

    def train_epoch(self, epoch: int) -> dict[str, float]:
        if epoch > 0:
            self._descend()
        with torch.no_grad():
            p_tr, _ = self.gen.probs(self.train_points)
            _, bayes_error = exact_leakage(p_tr.double(), self.train_onehot)
        return {"train_accuracy": 1.0 - float(bayes_error)}

    def validation_step(self, epoch: int) -> dict[str, float]:
        with torch.no_grad():
            p_va, d_va = self.gen.probs(self.val_points)
            mi, bayes_error = exact_leakage(p_va.double(), self.val_onehot)
            dist = float((p_va * d_va).sum(dim=1).mean())
        return {
            "val_accuracy": 1.0 - float(bayes_error),
            "val_distortion": dist,
            "val_mutual_information": float(mi),
        }
