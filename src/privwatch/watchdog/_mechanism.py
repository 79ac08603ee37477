"""The watchdog release channel, its lift-privacy level and its utility for a bi-partition."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlogy

from .._memory import check_allocation
from .._validation import DEFAULT_ATOL, check_mask, check_pmf, check_positive_int
from ..exceptions import ValidationError
from ..mechanisms import FiniteMechanism, Privacy
from ._partition import _set_risk, _symbol_risk, partition

__all__ = [
    "WatchdogMechanism",
    "WatchdogUtility",
    "partition_channel",
    "watchdog_channel",
    "watchdog_mechanism",
    "watchdog_utility",
]

FloatArray = NDArray[np.float64]
Randomization = str | ArrayLike


def partition_channel(
    p_x_size: int, keep: ArrayLike, randomization: Randomization = "merge"
) -> FloatArray:
    r"""Channel ``k[x, y]`` (output alphabet = observed alphabet) of a watchdog bi-partition.

    .. math:: k(y|x) = \mathbb{1}\{y = x\} \ (x \in \mathcal{X}_\varepsilon), \qquad
              k(y|x) = R(y) \ (x \in \mathcal{X}_\varepsilon^c)

    Hsu et al. eq. (9). ``randomization``: ``"merge"`` puts all flagged mass on the first flagged
    symbol (the representative of the merged class); ``"uniform"`` spreads it uniformly over the
    flagged symbols; an array ``R`` of length ``|X|`` must be a pmf supported on the flagged
    symbols. Every choice is X^c-invariant, hence optimal (Sadeghi et al. Cor. 1).
    """
    check_positive_int(p_x_size, "p_x_size")
    check_allocation("p_x_size", (p_x_size, p_x_size))
    keep_mask = check_mask(keep, p_x_size, "keep")
    k = np.zeros((p_x_size, p_x_size))
    kept = np.flatnonzero(keep_mask)
    k[kept, kept] = 1.0
    flagged = np.flatnonzero(~keep_mask)
    if flagged.size == 0:
        return k
    k[flagged] = _randomization_row(p_x_size, keep_mask, flagged, randomization)
    return k


def _randomization_row(
    n: int, keep: NDArray[np.bool_], flagged: NDArray[np.intp], randomization: Randomization
) -> FloatArray:
    row = np.zeros(n)
    if isinstance(randomization, str):
        if randomization == "merge":
            row[flagged[0]] = 1.0
        elif randomization == "uniform":
            row[flagged] = 1.0 / flagged.size
        else:
            raise ValidationError(
                "`randomization` must be 'merge', 'uniform' or a pmf over the observed symbols; "
                f"got {randomization!r}."
            )
        return row
    r = check_pmf(randomization, "randomization", ndim=1)
    if r.shape[0] != n:
        raise ValidationError(
            f"`randomization` must have one entry per observed symbol ({n}); got {r.shape[0]}."
        )
    if np.any(r[keep] > 0):
        raise ValidationError(
            "`randomization` must be supported on the flagged symbols (X_eps^c); got mass "
            f"{float(r[keep].sum())!r} on released symbols."
        )
    return r


def watchdog_channel(
    p: ArrayLike,
    epsilon: float,
    randomization: Randomization = "merge",
    *,
    atol: float = DEFAULT_ATOL,
) -> FloatArray:
    """The privacy-watchdog channel ``k[x, y]`` for threshold ``epsilon`` (Hsu et al. eq. (9)).

    See :func:`partition_channel` for ``randomization``.

    Examples
    --------
    >>> watchdog_channel([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]], 0.5, "uniform")
    array([[0.5, 0.5, 0. ],
           [0.5, 0.5, 0. ],
           [0. , 0. , 1. ]])
    """
    arr = check_pmf(p, atol=atol)
    return partition_channel(arr.shape[1], partition(arr, epsilon), randomization)


@dataclass(frozen=True)
class WatchdogMechanism(FiniteMechanism):
    """The watchdog's release of a known pmf as a :class:`~privwatch.mechanisms.Mechanism`.

    ``keep[x]``: True for the observed symbols released unchanged (the rest are flagged and
    randomized); ``threshold``: the epsilon they were flagged at; ``effective_epsilon``: the
    lift-privacy level of the release, max |log-lift| between sensitive and release (nats; the
    same for every X^c-invariant randomization, Sadeghi et al. Cor. 1); ``randomization``:
    ``"merge"``, ``"uniform"`` or a pmf over the flagged symbols (see
    :func:`partition_channel`). ``channel()`` is Hsu et al.'s eq. (9); ``release(observed,
    rng)`` draws from it; ``privacy`` is the guaranteed ``lift_epsilon``.
    """

    keep: NDArray[np.bool_]
    threshold: float
    effective_epsilon: float
    randomization: str | FloatArray = "merge"

    def channel(self) -> FloatArray:
        """The release channel ``k[x, y]`` (output alphabet = observed alphabet)."""
        return partition_channel(len(self.keep), self.keep, self.randomization)

    @property
    def privacy(self) -> Privacy:
        """Lift privacy at ``effective_epsilon`` on the pmf it was built for."""
        return Privacy("lift_epsilon", self.effective_epsilon, True)


def watchdog_mechanism(
    p: ArrayLike,
    epsilon: float,
    randomization: Randomization = "merge",
    *,
    atol: float = DEFAULT_ATOL,
) -> WatchdogMechanism:
    """The privacy watchdog at threshold ``epsilon`` on the pmf ``p[s, x]``, as a mechanism.

    Examples
    --------
    >>> m = watchdog_mechanism([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]], 0.5, "uniform")
    >>> m.keep.tolist(), m.privacy.measure
    ([False, False, True], 'lift_epsilon')
    >>> m.release([0, 1, 2], rng=0).shape
    (3,)
    """
    arr = check_pmf(p, atol=atol)
    keep = partition(arr, epsilon)
    partition_channel(arr.shape[1], keep, randomization)  # validates ``randomization``
    _, effective = _effective_level(arr, keep)
    rand = (
        randomization
        if isinstance(randomization, str)
        else check_pmf(randomization, "randomization", ndim=1)
    )
    return WatchdogMechanism(keep, float(epsilon), effective, rand)


@dataclass(frozen=True)
class WatchdogUtility:
    """Utility of a watchdog release: ``utility_mi`` = I(X;Y) in nats (Hsu eq. 11), ``nmil``
    (Sadeghi eq. 9), ``entropy_observed`` = H(X) and ``flagged_probability`` = P(X in X^c)."""

    utility_mi: float
    nmil: float
    entropy_observed: float
    flagged_probability: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def _utility(
    p_x: FloatArray, keep: NDArray[np.bool_], xlogx: FloatArray | None = None
) -> WatchdogUtility:
    """``xlogx`` is ``xlogy(p_x, p_x)`` when the caller already has it (a curve of thresholds)."""
    terms = xlogy(p_x, p_x) if xlogx is None else xlogx
    h = -float(terms.sum())
    flagged = p_x[~keep]
    mass = float(flagged.sum())
    # I(X;Y) = H_{X_eps} - P(X^c) log P(X^c) = H(X) - P(X^c) H(X | X in X^c)
    info = -float(terms[keep].sum()) - float(xlogy(mass, mass))
    info = min(max(info, 0.0), h)
    return WatchdogUtility(
        utility_mi=info,
        nmil=0.0 if h <= 0 else float(1.0 - info / h),
        entropy_observed=h,
        flagged_probability=mass,
    )


def watchdog_utility(
    p: ArrayLike, epsilon: float, *, atol: float = DEFAULT_ATOL
) -> WatchdogUtility:
    r"""Utility of the watchdog release at threshold ``epsilon``.

    .. math:: I(X;Y) = H_{\mathcal{X}_\varepsilon} - P_X(\mathcal{X}^c_\varepsilon)
              \log P_X(\mathcal{X}^c_\varepsilon), \qquad \mathrm{NMIL} = 1 - I(X;Y)/H(X)

    Hsu et al. eq. (11); Sadeghi et al. eq. (8)–(9). The same for every X^c-invariant
    randomization.

    Examples
    --------
    >>> u = watchdog_utility([[0.3, 0.1, 0.1], [0.1, 0.3, 0.1]], 0.5)
    >>> round(u.utility_mi, 4), round(u.nmil, 4)
    (0.5004, 0.5256)
    """
    arr = check_pmf(p, atol=atol)
    return _utility(arr.sum(axis=0), partition(arr, epsilon))


def _effective_level(
    p: FloatArray, keep: NDArray[np.bool_], risk: FloatArray | None = None
) -> tuple[float, float]:
    """(randomized level omega(X^c), effective level over both sets) of a bi-partition.

    ``risk`` is :func:`_symbol_risk` of ``p`` when the caller already has it."""
    risk = _symbol_risk(p) if risk is None else risk
    kept_level = float(risk[keep].max()) if keep.any() else 0.0
    randomized = _set_risk(p, ~keep) if (~keep).any() else 0.0
    return randomized, max(kept_level, randomized)
