"""Every measure of a joint pmf at once, as one result object."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import DEFAULT_ATOL, check_alpha, check_base, check_pmf
from ._alpha import _max_leakage_nats, arimoto_mi, sibson_mi
from ._bayes import bayes_error, bayes_leakage, guessing_probability
from ._common import marginals, raw_lift
from ._fdiv import _f_information_of_lift
from ._ldp import ldp_epsilon
from ._lift import lift_epsilon
from ._shannon import _mi_nats, entropy

__all__ = ["LeakageReport", "leakage_report"]


@dataclass(frozen=True)
class LeakageReport:
    """Leakage of S through X under every measure of :mod:`privwatch.measures`.

    Information quantities are in the unit given by ``base`` (None: nats); probabilities and the
    chi2 / tv / hellinger informations are unitless.
    """

    base: float | None
    alpha: float
    entropy_sensitive: float
    mutual_information: float
    lift_epsilon: float
    sibson_mi: float
    arimoto_mi: float
    maximal_leakage: float
    kl_information: float
    chi2_information: float
    tv_information: float
    hellinger_information: float
    guessing_probability: float
    prior_guessing_probability: float
    bayes_error: float
    bayes_leakage: float
    ldp_epsilon: float

    def to_dict(self) -> dict[str, float | None]:
        """A JSON-ready dict (``inf`` stays a float; use ``allow_nan`` JSON or str it)."""
        return asdict(self)

    def rows(self) -> list[tuple[str, float, str]]:
        """``(name, value, description)`` rows, the order used by the CLI table."""
        unit = "nats" if self.base is None else f"log base {self.base:g}"
        a = f"{self.alpha:g}"
        return [
            ("entropy_sensitive", self.entropy_sensitive, f"H(S), {unit}"),
            ("mutual_information", self.mutual_information, f"I(S;X), {unit}"),
            ("lift_epsilon", self.lift_epsilon, f"max |log-lift| (epsilon-lift privacy), {unit}"),
            ("sibson_mi", self.sibson_mi, f"Sibson I_alpha, alpha={a}, {unit}"),
            ("arimoto_mi", self.arimoto_mi, f"Arimoto I_alpha, alpha={a}, {unit}"),
            ("maximal_leakage", self.maximal_leakage, f"maximal leakage S->X, {unit}"),
            ("kl_information", self.kl_information, "f-information, f = t log t (nats)"),
            ("chi2_information", self.chi2_information, "f-information, f = (t-1)^2"),
            ("tv_information", self.tv_information, "f-information, f = |t-1|/2"),
            ("hellinger_information", self.hellinger_information, "f-information, (sqrt t-1)^2"),
            ("guessing_probability", self.guessing_probability, "P_c(S|X), MAP adversary"),
            ("prior_guessing_probability", self.prior_guessing_probability, "p*_S = max_s P(s)"),
            ("bayes_error", self.bayes_error, "1 - P_c(S|X)"),
            ("bayes_leakage", self.bayes_leakage, f"log P_c(S|X)/p*_S, {unit}"),
            ("ldp_epsilon", self.ldp_epsilon, f"local-DP epsilon of P(X|S), {unit}"),
        ]


def leakage_report(
    p: ArrayLike, *, alpha: float = 2.0, base: float | None = None, atol: float = DEFAULT_ATOL
) -> LeakageReport:
    """Compute every leakage measure of S through X for a joint pmf ``p[s, x]``.

    ``ldp_epsilon`` is that of the channel P_{X|S} (rows = sensitive values with positive
    probability), i.e. of X seen as a release of S.

    Examples
    --------
    >>> r = leakage_report([[0.25, 0.25], [0.25, 0.25]])
    >>> r.mutual_information, r.lift_epsilon, r.ldp_epsilon
    (0.0, 0.0, 0.0)
    """
    arr = check_pmf(p, atol=atol)
    a = check_alpha(alpha)
    b = check_base(base)
    scale = 1.0 if b is None else 1.0 / math.log(b)
    p_s, _ = marginals(arr)
    rows = p_s > 0
    cond = arr[rows] / p_s[rows, None]
    lifted = raw_lift(arr)  # shared by the four f-informations (f_information's own lift)
    return LeakageReport(
        base=b,
        alpha=a,
        entropy_sensitive=entropy(p_s, base=b, atol=atol),
        mutual_information=_mi_nats(arr) * scale,
        lift_epsilon=lift_epsilon(arr, base=b, atol=atol),
        sibson_mi=sibson_mi(arr, a, base=b, atol=atol),
        arimoto_mi=arimoto_mi(arr, a, base=b, atol=atol),
        maximal_leakage=_max_leakage_nats(arr) * scale,
        kl_information=_f_information_of_lift(lifted, "kl"),
        chi2_information=_f_information_of_lift(lifted, "chi2"),
        tv_information=_f_information_of_lift(lifted, "tv"),
        hellinger_information=_f_information_of_lift(lifted, "hellinger"),
        guessing_probability=guessing_probability(arr, atol=atol),
        prior_guessing_probability=float(np.max(p_s)),
        bayes_error=bayes_error(arr, atol=atol),
        bayes_leakage=bayes_leakage(arr, base=b, atol=atol),
        ldp_epsilon=ldp_epsilon(cond / cond.sum(axis=1, keepdims=True), base=b, atol=1e-6),
    )
