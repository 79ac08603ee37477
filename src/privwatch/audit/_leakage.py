r"""``Audit.leakage``: one documented set of keys on every route of the audit.

The audit has three routes: the release search (plug-in estimator, no ``delta``), the
(epsilon, delta) watchdog (plug-in, ``delta`` given) and the record-level watchdog (a learned
log-lift estimator). Whatever the route, ``leakage`` has exactly the keys of
:data:`LEAKAGE_KEYS`; a value that does not apply to the route is ``None``, never a missing key.
The ``utility`` sub-dictionary likewise always has the keys of :data:`UTILITY_KEYS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..measures import leakage_report
from ..release import ReleaseResult, explain_protection
from ..watchdog import Watchdog

__all__ = [
    "LEAKAGE_KEYS",
    "UTILITY_KEYS",
    "explain_release",
    "leakage_of_search",
    "leakage_of_watchdog",
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


def leakage_of_search(
    wd: Watchdog, found: ReleaseResult, sensitive: pd.Series, released: pd.DataFrame
) -> dict[str, Any]:
    """The release-search route: the release's guarantee, held-out check, frontier, and the
    exact leakage of the observed columns (before) and of the released cells (after)."""
    leakage = found.to_dict()
    leakage["guarantee_in_words"] = explain_release(found, str(sensitive.name))
    leakage["before"] = wd.leakage_before_.to_dict()
    leakage["after"] = release_leakage(sensitive, released).to_dict()
    flagged = found.records["flagged"].to_numpy()
    utility = {
        "information_nats": found.information_nats,
        "information_input_nats": found.information_input_nats,
        "flagged_probability": float(flagged.mean()) if flagged.size else 0.0,
    }
    return stable_leakage(leakage, utility)


def leakage_of_watchdog(
    wd: Watchdog,
    delta: float | None,
    sensitive: pd.Series,
    log_lift: np.ndarray,
    *,
    plugin: bool,
) -> dict[str, Any]:
    """The watchdog routes: (epsilon, delta) on the plug-in joint, or (``plugin=False``)
    record-level scores of a learned estimator, whose leakage after release is not measured."""
    reached = wd.guarantee_.breach_probability <= (delta or 0.0) + 1e-12
    leakage: dict[str, Any] = {
        "status": "met" if reached else "not_met",
        "reasons": []
        if reached
        else [
            f"the (epsilon, delta) algorithm reaches a breach probability of "
            f"{wd.guarantee_.breach_probability:.3g}, above the requested delta {delta or 0.0:g}"
        ],
        "guarantee": wd.guarantee_.to_dict(),
        "guarantee_in_words": wd.guarantee_.explain(),
    }
    if plugin:
        leakage["before"] = wd.leakage_before_.to_dict()
        leakage["after"] = wd.leakage_after_.to_dict()
    else:
        codes = pd.Index(wd.sensitive_labels_).get_indexer(sensitive)
        estimate = float(np.mean(log_lift[np.arange(len(codes)), codes]))
        leakage["before"] = {"mutual_information_estimate": estimate}
        leakage["after"] = None
    return stable_leakage(leakage, wd.utility_.to_dict())


def release_leakage(sensitive: pd.Series, released: pd.DataFrame) -> Any:
    """Exact leakage measures of the released cells about the sensitive column."""
    cells = pd.factorize(pd.MultiIndex.from_frame(released.astype(str)))[0]
    s_codes = pd.factorize(sensitive, sort=True)[0]
    p = np.zeros((int(s_codes.max()) + 1, int(cells.max()) + 1))
    np.add.at(p, (s_codes, cells), 1.0)
    return leakage_report(p / p.sum())


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
