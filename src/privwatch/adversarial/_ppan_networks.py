"""The networks a :class:`~privwatch.adversarial.PPAN` plays with, and the tensors they take.

- :func:`finite_networks`: the finite-alphabet mechanism and adversary of Tripathy, Wang, Ishwar
  §III-A1 (:meth:`PPAN.finite`);
- :func:`default_networks`: what ``PPAN()`` without networks trains, built in ``fit`` from the
  data's shape (scikit-learn's rule: every constructor argument has a default);
- :func:`sample_tensors`: samples as the tensors a mechanism and an adversary take (integer
  codes for a finite mechanism or a categorical adversary, float columns otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RNGLike, check_rng
from .._torch import build_seeded, module_device, torch
from .._validation import check_positive_int
from ..exceptions import ValidationError
from ._families import (
    CategoricalAdversary,
    FactoredMechanism,
    GaussianAdversary,
    GaussianMechanism,
    MatrixMechanism,
    squared_error,
)

__all__ = ["DEFAULT_HIDDEN", "default_networks", "finite_networks", "sample_tensors"]

#: hidden layers of the default networks (those of the paper's Gaussian experiments, §III-B)
DEFAULT_HIDDEN = (20, 20)


def finite_networks(
    n_observed: int,
    n_sensitive: int,
    n_outputs: int,
    observed_shape: Sequence[int] | None,
    rng: RNGLike,
) -> tuple[Any, Any]:
    """A :class:`MatrixMechanism` (n_observed x n_outputs), or a :class:`FactoredMechanism` of
    ``observed_shape``, and a matrix :class:`CategoricalAdversary` (n_outputs -> n_sensitive);
    with ``rng`` not None their initial weights are seeded from it."""
    check_positive_int(n_observed, "n_observed")
    check_positive_int(n_sensitive, "n_sensitive")
    if observed_shape is not None:
        shape = tuple(observed_shape)
        if (
            not shape
            or any(not isinstance(s, (int, np.integer)) or s < 1 for s in shape)
            or math.prod(shape) != n_observed
        ):
            raise ValidationError(
                f"`observed_shape` must be positive ints whose product is `n_observed` "
                f"({n_observed}); got {observed_shape!r}."
            )
    seed = None if rng is None else int(check_rng(rng).integers(0, 2**62))
    networks: tuple[Any, Any] = build_seeded(
        lambda: (
            MatrixMechanism(n_observed, n_outputs)
            if observed_shape is None
            else FactoredMechanism(observed_shape, n_outputs),
            CategoricalAdversary(n_outputs, n_sensitive),
        ),
        seed,
    )
    return networks


def _width(a: np.ndarray[Any, Any], name: str) -> int:
    if a.ndim not in (1, 2) or len(a) == 0:
        raise ValidationError(
            f"`{name}` must be a non-empty 1-d or (n, dim) array for the default networks; got "
            f"shape {a.shape} (give your own networks for other shapes)."
        )
    return 1 if a.ndim == 1 else int(a.shape[1])


def default_networks(
    observed: ArrayLike, sensitive: ArrayLike, useful: ArrayLike | None, seed: int
) -> dict[str, Any]:
    """The networks of ``PPAN()``, sized from the data: a :class:`GaussianMechanism` from the
    observed columns to the useful ones (the release lives where the useful data do; None: the
    observation), a :class:`CategoricalAdversary` for integer sensitive codes 0..k-1 (k the
    largest code plus one) or a :class:`GaussianAdversary` for real sensitive columns, both
    with :data:`DEFAULT_HIDDEN` layers and initial weights seeded with ``seed``, and the
    squared-error distortion."""
    obs = np.asarray(observed)
    use = obs if useful is None else np.asarray(useful)
    sens = np.asarray(sensitive)
    n_in, n_out = _width(obs, "observed"), _width(use, "useful")
    if np.issubdtype(sens.dtype, np.integer) and sens.ndim == 1 and len(sens):
        if sens.min() < 0:
            raise ValidationError("`sensitive` codes must be non-negative integers.")
        n_classes = max(int(sens.max()) + 1, 2)

        def adversary() -> Any:
            return CategoricalAdversary(n_out, n_classes, hidden=DEFAULT_HIDDEN)
    else:
        n_sensitive = _width(sens.astype(np.float64), "sensitive")

        def adversary() -> Any:
            return GaussianAdversary(n_out, n_sensitive, hidden=DEFAULT_HIDDEN)

    mechanism, adv = build_seeded(
        lambda: (GaussianMechanism(n_in, n_out, hidden=DEFAULT_HIDDEN), adversary()), seed
    )
    distortion: Callable[[Any, Any], Any] = squared_error
    return {"mechanism": mechanism, "adversary": adv, "distortion": distortion}


def observed_tensor(mechanism: Any, observed: ArrayLike) -> Any:
    """``observed`` on the mechanism's device: codes for a finite mechanism (``exact``), float
    columns otherwise (a 1-d array is one column)."""
    exact = getattr(mechanism, "exact", False)
    t = torch.as_tensor(np.asarray(observed), dtype=torch.int64 if exact else torch.float32)
    t = t.to(module_device(mechanism))
    return t if exact or t.ndim > 1 else t[:, None]


def sample_tensors(
    mechanism: Any,
    adversary: Any,
    observed: ArrayLike,
    sensitive: ArrayLike,
    useful: ArrayLike | None = None,
) -> tuple[Any, Any, Any]:
    """(observed, sensitive, useful) tensors on the mechanism's device; ``useful`` None is
    the observation itself (the useful-data model)."""
    arrays = [np.asarray(a) for a in (observed, sensitive)]
    arrays.append(arrays[0] if useful is None else np.asarray(useful))
    n = len(arrays[0])
    if n == 0 or any(len(a) != n for a in arrays):
        raise ValidationError(
            f"`observed`, `sensitive`, `useful` must be non-empty with one row per sample; "
            f"got lengths {[len(a) for a in arrays]}."
        )
    dev = module_device(mechanism)
    s_int = hasattr(adversary, "log_posterior")
    s_t = torch.as_tensor(arrays[1], dtype=torch.int64 if s_int else torch.float32).to(dev)
    if not s_int and s_t.ndim == 1:
        s_t = s_t[:, None]
    u_int = np.issubdtype(arrays[2].dtype, np.integer) and getattr(mechanism, "exact", False)
    u_t = torch.as_tensor(arrays[2], dtype=torch.int64 if u_int else torch.float32).to(dev)
    if not u_int and u_t.ndim == 1:
        u_t = u_t[:, None]
    return observed_tensor(mechanism, arrays[0]), s_t, u_t
