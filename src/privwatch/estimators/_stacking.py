"""Neural lift estimators fitted together: every ensemble member of every estimator in one
stacked program (:mod:`privwatch.estimators._stacked_lift`).

``fit``, ``fit_score`` (the full fit and every fold estimator of the cross-fit),
``fit_source`` and :func:`~privwatch.estimators.cross_fit_source` all train through a
:class:`LiftStack`: each estimator is *prepared* in turn (checks, preprocessing, prior, and the
draws of its members, in the order its own fit takes them from its ``rng``), then
:meth:`LiftStack.fit` trains the members of all of them at once. Inside
:func:`one_after_another` they train one network after another instead, as before stacking
(the reference the tests compare the stack with, and the benchmarks' baseline).

This module does not import torch; :meth:`LiftStack.fit` does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["LiftStack", "fit_together", "one_after_another", "stackable", "stacking"]

_ONE_AFTER_ANOTHER: ContextVar[bool] = ContextVar("privwatch_one_after_another", default=False)


@contextmanager
def one_after_another() -> Iterator[None]:
    """Within the block, neural lift estimators train one network after another (no stack)."""
    token = _ONE_AFTER_ANOTHER.set(True)
    try:
        yield
    finally:
        _ONE_AFTER_ANOTHER.reset(token)


def stacking() -> bool:
    """True unless inside :func:`one_after_another`."""
    return not _ONE_AFTER_ANOTHER.get()


def stackable(estimator: Any) -> bool:
    """True for an estimator a :class:`LiftStack` can train (a torch neural lift estimator),
    when stacking is on."""
    check = getattr(estimator, "_stackable", None)
    return stacking() and check is not None and bool(check())


def _settings(estimator: Any) -> tuple[Any, ...]:
    """What members must share to train in one stack: the class and every parameter but the
    seed and the progress bar, and the number of sensitive values."""
    params = estimator.get_params()
    shared = sorted((k, repr(v)) for k, v in params.items() if k not in ("rng", "progress"))
    return type(estimator), tuple(shared), estimator._n_outputs()


class LiftStack:
    """Neural lift estimators prepared one by one, then trained together by :meth:`fit`.

    Members whose estimators share their settings (class, parameters but ``rng``, number of
    sensitive values) form one stack; estimators of different settings form one stack each.
    In-memory and streamed estimators do not mix in one :class:`LiftStack`.
    """

    def __init__(self) -> None:
        self.plans: list[Any] = []
        self.groups: list[tuple[Any, Any]] = []
        self.streamed: bool | None = None
        self.device: Any = None

    def _kind(self, streamed: bool, device: Any) -> None:
        if self.streamed not in (None, streamed):
            raise ValueError("in-memory and streamed estimators do not share a LiftStack")
        self.streamed, self.device = streamed, device

    def add(self, estimator: Any, X: Any, s: Any) -> LiftStack:
        """Prepare ``estimator`` to fit on the records ``X`` with sensitive labels ``s``;
        returns the stack."""
        from ._neural_training import plan_members

        features, codes, draw, dev = estimator._prepare_memory(X, s)
        self._kind(False, dev)
        group = len(self.groups)
        self.groups.append((features, codes))
        self.plans += plan_members(estimator, int(features.shape[1]), draw, dev, group)
        return self

    def add_streamed(self, estimator: Any, members: Any) -> LiftStack:
        """Prepare ``estimator`` to fit on the streamed ``members``
        (:class:`~privwatch.estimators._stream_training.StreamedMembers`, its statistics pass
        done); returns the stack."""
        from ._neural_training import plan_members

        self._kind(True, members.device)
        n_in = int(estimator.preprocessor_.n_features_)
        self.plans += plan_members(estimator, n_in, members, members.device)
        return self

    def fit(self) -> None:
        """Train every prepared member (one stacked program per shared setting) and finish
        each estimator (its members in order, their calibration or diagnostics)."""
        from ._neural_training import finish_members
        from ._stacked_lift import train_stacked

        stacks: dict[tuple[Any, ...], list[Any]] = {}
        for plan in self.plans:
            stacks.setdefault(_settings(plan.estimator), []).append(plan)
        from .._torch import cpu_threads

        with cpu_threads(self.device):  # threads capped to the free cores (issue #41 item 7)
            for plans in stacks.values():
                groups = None if self.streamed else self.groups
                finish_members(plans, train_stacked(plans, groups, self.device))


def fit_together(estimators: Sequence[Any], data: Sequence[tuple[Any, Any]]) -> None:
    """Fit each estimator on its ``(X, s)``: the stackable ones (:func:`stackable`) in one
    :class:`LiftStack`, the others one by one with their own ``fit``."""
    stack = LiftStack()
    for est, (X, s) in zip(estimators, data, strict=True):
        if stackable(est):
            stack.add(est, X, s)
        else:
            est.fit(X, s)
    if stack.plans:
        stack.fit()
