r"""An attribute-inference attack on a release, with a control set, and the exact Bayes attacker.

The design is anonymeter's (Giomi et al., "A Unified Framework for Quantifying Privacy Risk in
Synthetic Data", PoPETs 2023): attack records that were in the release (targets) and records
held out of it (control) with the same attacker; the excess success on targets, normalised by
what the control attack leaves to gain, is the privacy risk

.. math:: R = \frac{r_\mathrm{targets} - r_\mathrm{control}}{1 - r_\mathrm{control}}.

Success rates carry Wilson score intervals (Wilson, JASA 1927) and the risk's interval
propagates their half-widths to first order, exactly as anonymeter 1.1.0 does
(``anonymeter.stats.confidence``), so the two can be compared figure by figure.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import ndtri  # the normal quantile (scipy.stats.norm.ppf's own)

from .._rng import RNGLike, check_rng
from .._validation import check_open_fraction, check_positive_int, short_repr
from ..exceptions import ValidationError
from ..measures import guessing_probability

__all__ = ["AttackResult", "bayes_attack_success", "inference_attack", "wilson_interval"]


def wilson_interval(
    n_success: int, n_total: int, confidence_level: float = 0.95
) -> tuple[float, float, float]:
    r"""Wilson score estimate of a success rate: ``(centre, low, high)``.

    .. math:: \tilde r = \frac{n_s + z^2/2}{n + z^2}, \qquad
              h = \frac{z}{n + z^2} \sqrt{\frac{n_s (n - n_s)}{n} + \frac{z^2}{4}}

    with :math:`z` the normal quantile of ``(1 + confidence_level) / 2``; the interval is
    :math:`\tilde r \pm h`. Wilson, JASA 22, 1927.

    Examples
    --------
    >>> [round(v, 4) for v in wilson_interval(50, 100)]
    [0.5, 0.4038, 0.5962]
    """
    n_total = check_positive_int(n_total, "n_total")
    if (
        isinstance(n_success, bool)
        or not isinstance(n_success, numbers.Integral)
        or not 0 <= n_success <= n_total
    ):
        raise ValidationError(
            "`n_success` must be an int between 0 and `n_total`; "
            f"got {short_repr(n_success)} of {n_total}."
        )
    z = float(ndtri(0.5 * (1.0 + check_open_fraction(confidence_level, "confidence_level"))))
    denominator = n_total + z * z
    centre = (n_success + 0.5 * z * z) / denominator
    half = z / denominator * math.sqrt(n_success * (n_total - n_success) / n_total + 0.25 * z * z)
    return centre, centre - half, centre + half


def bayes_attack_success(joint: ArrayLike) -> float:
    r"""Success of the Bayes-optimal attacker who sees the release and knows the joint pmf.

    .. math:: P_c = \sum_y \max_s p(s, y)

    ``joint[s, y]``: rows = sensitive values, columns = released values (the orientation of
    docs/architecture.md).
    This is the posterior Bayes vulnerability (:func:`privwatch.measures.guessing_probability`);
    no attack on the release, whatever its model, does better on records drawn from ``joint``.

    Examples
    --------
    >>> bayes_attack_success([[0.4, 0.1], [0.1, 0.4]])
    0.8
    """
    return guessing_probability(joint)


@dataclass(frozen=True)
class AttackResult:
    """Outcome of :func:`inference_attack`.

    Rates are plain proportions (successes / attacks); the intervals are Wilson intervals at
    ``confidence_level``. ``risk`` and ``risk_ci`` follow anonymeter: computed from the Wilson
    centres, first-order error propagation, clipped to [0, 1]. ``baseline_success`` is the
    success on the targets of guessing the release's most frequent value for everyone.
    ``bayes_success`` is the exact Bayes attacker's success when a joint pmf was given.
    """

    n_targets: int
    n_control: int
    n_success_targets: int
    n_success_control: int
    n_success_baseline: int
    success_targets: float
    success_targets_ci: tuple[float, float]
    success_control: float
    success_control_ci: tuple[float, float]
    baseline_success: float
    baseline_success_ci: tuple[float, float]
    risk: float
    risk_ci: tuple[float, float]
    targets_unmatched: int
    control_unmatched: int
    confidence_level: float
    bayes_success: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types; intervals as two-element lists."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def _check_frame(frame: Any, name: str, columns: Sequence[str]) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ValidationError(f"`{name}` must be a pandas DataFrame; got {type(frame).__name__}.")
    if len(frame) == 0:
        raise ValidationError(f"`{name}` must have at least one row; got an empty frame.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValidationError(
            f"`{name}` must have the column {missing[0]!r}; got columns {short_repr(list(frame))}."
        )
    return frame


def _risk(
    targets: tuple[float, float, float], control: tuple[float, float, float]
) -> tuple[float, float, float]:
    """anonymeter's residual success: value and propagated error, clipped to [0, 1]."""
    rt, ht = targets[0], targets[0] - targets[1]
    rc, hc = control[0], control[0] - control[1]
    value = (rt - rc) / (1.0 - rc)
    error = math.hypot(ht / abs(1.0 - rc), hc * (rt - 1.0) / (1.0 - rc) ** 2)

    def clip(v: float) -> float:
        return min(max(v, 0.0), 1.0)

    return clip(value), clip(value - error), clip(value + error)


def _checked_frames(
    released: pd.DataFrame,
    targets: pd.DataFrame,
    control: pd.DataFrame,
    quasi_identifiers: str | Sequence[str],
    sensitive: str,
) -> tuple[tuple[str, ...], list[pd.DataFrame]]:
    """The quasi-identifiers, and the three frames checked to hold them and ``sensitive``."""
    qis = (quasi_identifiers,) if isinstance(quasi_identifiers, str) else tuple(quasi_identifiers)
    if not qis:
        raise ValidationError("`quasi_identifiers` must name at least one column; got none.")
    if not isinstance(sensitive, str):
        raise ValidationError(f"`sensitive` must be one column name; got {short_repr(sensitive)}.")
    if sensitive in qis:
        raise ValidationError(f"`sensitive` must not be a quasi-identifier; got {sensitive!r}.")
    columns = [*qis, sensitive]
    names = ("released", "targets", "control")
    frames = [
        _check_frame(f, n, columns)
        for f, n in zip((released, targets, control), names, strict=True)
    ]
    for f, n in zip(frames, names, strict=True):
        if f[sensitive].isna().any():
            raise ValidationError(
                f"`{n}` must have no missing value in the sensitive column {sensitive!r}."
            )
    return qis, frames


def _guesses(
    frames: list[pd.DataFrame], qis: tuple[str, ...], sensitive: str, rng: RNGLike
) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    """The attack on the targets and on the control: (hits, attacks, unmatched) each, and the
    baseline's hits on the targets (see :func:`inference_attack`)."""
    gen = check_rng(rng)
    columns = [*qis, sensitive]
    sizes = np.cumsum([0, *(len(f) for f in frames)])
    both = pd.concat([f[columns] for f in frames], ignore_index=True)
    cells = np.asarray(
        both.groupby(list(qis), sort=False, dropna=False, observed=True).ngroup(), dtype=np.intp
    )
    values = np.asarray(pd.factorize(both[sensitive])[0], dtype=np.intp)
    n_cells, n_values = int(cells.max()) + 1, int(values.max()) + 1
    rel = slice(sizes[0], sizes[1])
    counts = np.bincount(cells[rel] * n_values + values[rel], minlength=n_cells * n_values)
    counts = counts.reshape(n_cells, n_values).astype(np.float64)
    overall = counts.sum(axis=0)
    baseline = int(np.argmax(overall + 0.5 * gen.random(n_values)))
    present = counts.sum(axis=1) > 0
    guess = np.where(present, np.argmax(counts + 0.5 * gen.random(counts.shape), axis=1), baseline)

    def score(i: int) -> tuple[int, int, int]:
        part = slice(sizes[i], sizes[i + 1])
        hits = int((guess[cells[part]] == values[part]).sum())
        unmatched = int((~present[cells[part]]).sum())
        return hits, int(sizes[i + 1] - sizes[i]), unmatched

    return score(1), score(2), int((values[sizes[1] : sizes[2]] == baseline).sum())


def inference_attack(
    released: pd.DataFrame,
    targets: pd.DataFrame,
    control: pd.DataFrame,
    quasi_identifiers: str | Sequence[str],
    sensitive: str,
    *,
    joint: ArrayLike | None = None,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> AttackResult:
    """Attribute-inference attack on ``released`` with a control set (anonymeter's design).

    The attacker knows a person's released quasi-identifier values and guesses their sensitive
    value as the most frequent one among the released records of the same cell (ties broken at
    random with ``rng``, once per cell); for a cell absent from the release, the release's most
    frequent value overall (the baseline guess).

    Parameters
    ----------
    released : pandas.DataFrame
        The published table: released quasi-identifier values and the sensitive column.
    targets, control : pandas.DataFrame
        Records that were in the release, and records held out of it, each with their released
        quasi-identifier values and their true sensitive value.
    quasi_identifiers : str or sequence of str
        The released columns the attacker matches on.
    sensitive : str
        The column the attacker guesses.
    joint : array_like, optional
        A joint pmf ``p[s, y]`` of sensitive value and release (e.g. the fitted distribution):
        adds the exact Bayes attacker's success (:func:`bayes_attack_success`).
    confidence_level : float
        Of the Wilson intervals (default 0.95).
    rng : int, numpy.random.Generator or None
        Tie-breaking.

    Examples
    --------
    >>> rel = pd.DataFrame({"age": ["<40"] * 4 + [">=40"] * 4, "hiv": [1, 1, 1, 0, 0, 0, 0, 0]})
    >>> tgt = rel.iloc[[0, 3, 4, 7]]
    >>> ctl = pd.DataFrame({"age": ["<40", ">=40", "?"], "hiv": [0, 0, 1]})
    >>> r = inference_attack(rel, tgt, ctl, "age", "hiv", rng=0)
    >>> r.n_success_targets, r.n_success_control, r.control_unmatched
    (3, 1, 1)
    """
    qis, frames = _checked_frames(released, targets, control, quasi_identifiers, sensitive)
    (hit_t, n_t, miss_t), (hit_c, n_c, miss_c), hit_b = _guesses(frames, qis, sensitive, rng)
    w_t = wilson_interval(hit_t, n_t, confidence_level)
    w_c = wilson_interval(hit_c, n_c, confidence_level)
    w_b = wilson_interval(hit_b, n_t, confidence_level)
    risk = _risk(w_t, w_c)
    return AttackResult(
        n_targets=n_t,
        n_control=n_c,
        n_success_targets=hit_t,
        n_success_control=hit_c,
        n_success_baseline=hit_b,
        success_targets=hit_t / n_t,
        success_targets_ci=(w_t[1], w_t[2]),
        success_control=hit_c / n_c,
        success_control_ci=(w_c[1], w_c[2]),
        baseline_success=hit_b / n_t,
        baseline_success_ci=(w_b[1], w_b[2]),
        risk=risk[0],
        risk_ci=(risk[1], risk[2]),
        targets_unmatched=miss_t,
        control_unmatched=miss_c,
        confidence_level=float(confidence_level),
        bayes_success=None if joint is None else bayes_attack_success(joint),
    )
