r"""Per-value protection: what a lift-privacy guarantee promises about each sensitive value.

Epsilon-lift privacy bounds an adversary's belief in each sensitive value :math:`s` (prior
:math:`p = p(s)`) after seeing a released cell (Hsu et al., Def. 1; Sadeghi et al. §II):

- one-sided (``disclosure="positive"``): :math:`p(s \mid y) \le \min(1, p e^{\epsilon})`;
- two-sided (``"both"``): also :math:`p(s \mid y) \ge p e^{-\epsilon}`, and since every other
  value keeps at least :math:`e^{-\epsilon}` of its prior,
  :math:`p(s \mid y) \le \min(p e^{\epsilon}, 1 - (1 - p) e^{-\epsilon})`.

A value is *protected* when its upper bound is below 1: a one-sided guarantee with
:math:`p e^{\epsilon} \ge 1` says nothing about that value (an adversary may become certain of
it), and a guarantee that protects no value is never called met.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_nonnegative
from ...exceptions import ValidationError
from ._counts import CountTable
from ._lift_box import DISCLOSURES

__all__ = ["explain_protection", "per_value", "table_protection", "unprotected"]

#: Beyond this epsilon (nats) every bound is already 1 or 0 to double precision.
MAX_EPSILON = 700.0


def _checked(epsilon: Any, disclosure: Any) -> float:
    eps = check_nonnegative(epsilon, "epsilon")
    if disclosure not in DISCLOSURES:
        raise ValidationError(f"`disclosure` must be one of {DISCLOSURES}; got {disclosure!r}.")
    return min(eps, MAX_EPSILON)


def _pct(x: float) -> str:
    """A belief as a percentage that never rounds a bound to 0 % or 100 % it does not reach."""
    for digits in (0, 1, 2, 3):
        text = f"{x:.{digits}%}"
        if (x <= 0 or text != f"{0:.{digits}%}") and (x >= 1 or text != f"{1:.{digits}%}"):
            return text
    return f"{x:.4%}"


def per_value(shares: pd.Series, epsilon: float, disclosure: str) -> list[dict[str, Any]]:
    """``[{value, share, belief_max, belief_min, protected}]`` for each sensitive value.

    ``shares``: each value's share of the records. ``belief_min`` is None one-sided.

    Examples
    --------
    >>> rows = per_value(pd.Series({"a": 0.6, "b": 0.4}), 0.92, "positive")
    >>> [(r["value"], round(r["belief_max"], 3), r["protected"]) for r in rows]
    [('a', 1.0, False), ('b', 1.0, False)]
    """
    epsilon = _checked(epsilon, disclosure)
    out = []
    grow, shrink = math.exp(epsilon), math.exp(-epsilon)
    for value, share in shares.items():
        p = float(share)
        top = p * grow
        if disclosure == "both":
            top = min(top, 1.0 - (1.0 - p) * shrink)
        out.append(
            {
                "value": str(value),
                "share": p,
                "belief_max": min(1.0, top),
                "belief_min": p * shrink if disclosure == "both" else None,
                "protected": bool(top < 1.0 - 1e-12),
            }
        )
    return out


def table_protection(table: CountTable, epsilon: float, disclosure: str) -> list[dict[str, Any]]:
    """:func:`per_value` of each sensitive attribute of a count table (``attribute`` names it;
    with several attributes their joint tuple ``a|b``, named ``a+b``, comes first), the shares
    being the table's (all folds)."""
    _checked(epsilon, disclosure)
    shares = table.total().sum(0)
    groups = [("+".join(table.sensitive), ["|".join(v) for v in table.sensitive_values], shares)]
    if len(table.sensitive) > 1:
        for a, codes in enumerate(table.marginals()):
            values = sorted({v[a] for v in table.sensitive_values})
            groups.append((table.sensitive[a], values, np.bincount(codes, weights=shares)))
    out = []
    for name, values, counts in groups:
        series = pd.Series(np.asarray(counts, dtype=float) / float(np.sum(counts)), index=values)
        out += [{"attribute": name, **row} for row in per_value(series, epsilon, disclosure)]
    return out


def unprotected(rows: list[dict[str, Any]]) -> list[str]:
    """The values a guarantee says nothing about."""
    return [r["value"] for r in rows if not r["protected"]]


def explain_protection(
    rows: list[dict[str, Any]], name: str, epsilon: float, disclosure: str
) -> str:
    """What the guarantee means for one person: the value whose belief can grow the most (in
    percentage points), and every value left unprotected."""
    _checked(epsilon, disclosure)
    kind = "two-sided" if disclosure == "both" else "one-sided"
    worst = max(rows, key=lambda r: (r["belief_max"] - r["share"], -r["share"]))
    text = (
        f"Seeing a released record, an adversary's belief that the person's {name} is "
        f"{worst['value']} can grow from {_pct(worst['share'])} (its share in the data) to at "
        f"most {_pct(worst['belief_max'])}"
    )
    if worst["belief_min"] is not None:
        text += f", and shrink to no less than {_pct(worst['belief_min'])}"
    text += f" (epsilon = {epsilon:.3g} nats, {kind} lift privacy)."
    lost = unprotected(rows)
    if len(lost) == len(rows):
        return text + (
            f" This protects no value of {name}: an adversary may become certain of any of them."
        )
    if lost:
        text += (
            f" Not protected: {', '.join(lost)} (the bound reaches 100 %: an adversary may "
            "become certain of it)."
        )
    return text
