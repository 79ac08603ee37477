r"""``Audit.leakage``: one documented set of keys on every route and release method.

Each release method (:data:`privwatch.audit.METHODS`: the release search, the (epsilon, delta)
watchdog, the record-level watchdog of a learned estimator) writes its section through
:func:`stable_leakage`, so that ``leakage`` has exactly the keys of :data:`LEAKAGE_KEYS`; a
value that does not apply to the method or route is ``None``, never a missing key. The
``utility`` sub-dictionary likewise always has the keys of :data:`UTILITY_KEYS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..measures import leakage_report
from ..release import ReleaseResult, explain_protection

__all__ = [
    "LEAKAGE_KEYS",
    "UTILITY_KEYS",
    "explain_release",
    "release_joint",
    "release_leakage",
    "stable_leakage",
]

#: Keys of ``Audit.leakage`` (and of the same part of leakage.json), in order.
LEAKAGE_KEYS = (
    "status",  # "met" / "not_met": whether the requested guarantee was delivered
    "reasons",  # list of str: why not (empty when met)
    "alternatives",  # list of str: nearest feasible settings (release search only, else [])
    "guarantee",  # dict: the guarantee delivered (route-specific keys, see docs/report.md)
    "guarantee_in_words",  # str: what it means for one person
    "release",  # dict | None: the generalisation found (release search only)
    "held_out",  # dict | None: the cross-fitted held-out check (release search only)
    "frontier",  # list | None: information kept vs epsilon (release search only)
    "before",  # dict: leakage of the observed columns about the sensitive one (nats)
    "after",  # dict | None: leakage of the release (None for a learned estimator)
    "utility",  # dict with UTILITY_KEYS
    "classic",  # dict | None: classic disclosure measures (plug-in with checks only)
    "attack",  # dict | None: inference attack on the release (release search with checks)
    "reidentification",  # dict | None: re-identification risk, release and input (with checks)
    "warnings",  # list of {category, message}: every warning raised during the run
)

#: Keys of ``leakage["utility"]``; None where the route does not measure the quantity.
UTILITY_KEYS = (
    "utility_mi",  # I(observed; release) of the watchdog release, nats (Hsu et al. eq. 11)
    "entropy_observed",  # H(observed), nats
    "nmil",  # normalised mutual-information loss 1 - utility_mi / entropy_observed
    "flagged_probability",  # share of records flagged (above epsilon)
    "information_nats",  # entropy of the released table, nats (release search)
    "information_input_nats",  # entropy of the observed columns of the input, nats (search)
)


def stable_leakage(leakage: dict[str, Any], utility: dict[str, Any]) -> dict[str, Any]:
    out = {key: leakage.get(key) for key in LEAKAGE_KEYS}
    out["utility"] = {key: utility.get(key) for key in UTILITY_KEYS}
    out["reasons"] = list(out["reasons"] or [])
    out["alternatives"] = list(out["alternatives"] or [])
    out["warnings"] = list(out["warnings"] or [])
    return out


def release_joint(sensitive: pd.Series, released: pd.DataFrame) -> np.ndarray:
    """``p[s, cell]`` of released records: sensitive values in sorted order, released cells
    (tuples of ``released``, as text) in order of first appearance."""
    cells = pd.factorize(pd.MultiIndex.from_frame(released.astype(str)))[0]
    s_codes = pd.factorize(sensitive, sort=True)[0]
    p = np.zeros((int(s_codes.max()) + 1, int(cells.max()) + 1))
    np.add.at(p, (s_codes, cells), 1.0)
    out: np.ndarray = p / p.sum()
    return out


def release_leakage(sensitive: pd.Series, released: pd.DataFrame) -> Any:
    """Exact leakage measures of the released cells about the sensitive column."""
    return leakage_report(release_joint(sensitive, released))


def explain_release(found: ReleaseResult, name: str) -> str:
    r"""What the guarantee means for one person, in words: the sensitive value whose belief can
    grow the most (in percentage points) and every value left unprotected
    (:func:`privwatch.release.explain_protection`), then what the held-out check found.
    ``name``: the sensitive column (``a+b`` for several, their joint tuple)."""
    rows = [r for r in found.per_value if r.get("attribute", name) == name]
    text = explain_protection(rows, name, found.epsilon, found.disclosure)
    text += " This holds exactly for the audited records; "
    held = found.held_out
    if held is None:
        return text + "it was not checked on held-out records."
    lo, hi = held.breach_probability_ci
    margin = (
        ""
        if found.confidence is None
        else (f" (cells searched with a {found.confidence:.0%} credible margin)")
    )
    return text + (
        f"for people the release was not fitted on, an estimated {held.breach_probability:.1%} "
        f"(95 % interval {lo:.1%}-{hi:.1%}) fall in a released cell that breaks it{margin}."
    )
