"""One verb for every release mechanism: :class:`Mechanism` and the :class:`Privacy` it states."""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._rng import RNGLike, check_rng
from ..exceptions import ValidationError

__all__ = ["FiniteMechanism", "Mechanism", "Privacy", "check_codes"]


@dataclass(frozen=True)
class Privacy:
    """What a mechanism guarantees, or what it was measured at.

    ``measure``: the name of the leakage measure (as in :mod:`privwatch.measures`, e.g.
    ``"ldp_epsilon"``, ``"mutual_information"``, ``"bayes_error"``, ``"geo_epsilon"``);
    ``value``: its value (nats for information, per metre for ``"geo_epsilon"``, a probability for
    ``"bayes_error"``); ``guaranteed``: True when it holds for every input by construction or
    was certified on the given pmf, False when it was measured (e.g. a learned mechanism on
    held-out data).
    """

    measure: str
    value: float
    guaranteed: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Mechanism(abc.ABC):
    """A release mechanism: reads an observed value, publishes a release.

    Every mechanism of privwatch speaks the same three words:

    * :meth:`release` ``(observed, rng=None)``: one random release per observed row;
    * :meth:`channel` ``()``: the exact row-stochastic ``k[x, y]`` (rows: observed values,
      columns: releases) as a dense array, where the output alphabet is finite;
    * :attr:`privacy`: the :class:`Privacy` it guarantees or was measured at.
    """

    @abc.abstractmethod
    def release(self, observed: ArrayLike, rng: RNGLike = None) -> NDArray[Any]:
        """One random release for each row of ``observed``."""

    def channel(self) -> NDArray[np.float64]:
        """The exact channel ``k[x, y]`` as a dense row-stochastic array.

        Raises :class:`~privwatch.exceptions.ValidationError` for mechanisms whose releases
        are continuous (no finite channel).
        """
        raise ValidationError(
            f"`{type(self).__name__}` must have a finite output alphabet to give a channel; "
            "got a mechanism with continuous releases (use release())."
        )

    @property
    @abc.abstractmethod
    def privacy(self) -> Privacy:
        """What the mechanism guarantees or was measured at."""


class FiniteMechanism(Mechanism):
    """A mechanism on finite alphabets, defined by its channel: :meth:`release` draws
    ``y ~ k[x, :]`` for each observed code ``x`` (``0 .. n_observed - 1``) from :meth:`channel`.

    Subclasses implement :meth:`channel` and :attr:`privacy`.
    """

    @abc.abstractmethod
    def channel(self) -> NDArray[np.float64]:
        """The exact channel ``k[x, y]`` as a dense row-stochastic array."""

    def release(self, observed: ArrayLike, rng: RNGLike = None) -> NDArray[np.int64]:
        """One release code per observed code, drawn from :meth:`channel`."""
        return release_from_channel(self.channel(), observed, check_rng(rng))


def release_from_channel(
    k: NDArray[np.float64], observed: ArrayLike, g: np.random.Generator
) -> NDArray[np.int64]:
    """Draw ``y ~ k[x, :]`` for every index ``x`` of ``observed`` (inverse-CDF, vectorised)."""
    codes = check_codes(observed, k.shape[0])
    cdf = np.cumsum(k[codes], axis=1)
    u = g.random(len(codes)) * cdf[:, -1]
    out = (cdf < u[:, None]).sum(axis=1)
    return np.asarray(np.minimum(out, k.shape[1] - 1), dtype=np.int64)


def check_codes(observed: ArrayLike, n_inputs: int) -> NDArray[np.int64]:
    """``observed`` as a 1-d array of input indices ``0 .. n_inputs - 1``."""
    raw = np.asarray(observed)
    if (
        raw.ndim != 1
        or raw.dtype.kind not in "iu"
        or not (raw.size == 0 or (raw.min() >= 0 and raw.max() < n_inputs))
    ):
        shown = repr(observed) if raw.size <= 8 else f"shape {raw.shape}, dtype {raw.dtype}"
        raise ValidationError(
            f"`observed` must be a 1-d array of integer codes in [0, {n_inputs}); got {shown}."
        )
    return np.asarray(raw, dtype=np.int64)
