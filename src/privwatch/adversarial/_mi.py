"""Mutual information of a batch from its target and prediction matrices (Romanelli et al.)."""

from __future__ import annotations

from typing import Any

__all__ = ["batch_mutual_information"]


def batch_mutual_information(targets: Any, predictions: Any, eps: float = 1e-12) -> Any:
    r"""I(X; Y) in nats of the true class X and the classifier's guess Y over one batch.

    ``targets`` (T) is the (N', |X|) one-hot matrix of true classes, ``predictions`` (Q) the
    (N', |X|) matrix of predicted class probabilities. Romanelli, Chatzikokolakis, Palamidessi
    eq. (18)-(21):

    .. math:: P_X = \frac{1}{N'} \sum_i T_{i\cdot},\quad P_Y = \frac{1}{N'} \sum_i Q_{i\cdot},
              \quad P_{X,Y} = \frac{1}{N'} T^\top Q,\quad
              I(X;Y) = \sum_{x,y} P_{X,Y}(x,y) \log \frac{P_{X,Y}(x,y)}{P_X(x) P_Y(y)}

    Differentiable in ``predictions`` (torch tensors), so a generator can descend it.

    >>> import torch
    >>> t = torch.eye(2).repeat(50, 1)
    >>> round(float(batch_mutual_information(t, t)), 6)  # perfect guess: H(X) = ln 2
    0.693147
    >>> round(float(batch_mutual_information(t, torch.full((100, 2), 0.5))), 6)
    0.0
    """
    n = targets.shape[0]
    joint = targets.T @ predictions / n
    p_x = joint.sum(dim=1, keepdim=True)
    p_y = joint.sum(dim=0, keepdim=True)
    return (joint * (joint.clamp_min(eps).log() - (p_x * p_y).clamp_min(eps).log())).sum()
