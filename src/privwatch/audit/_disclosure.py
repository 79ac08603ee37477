"""The classic disclosure measures and an inference attack beside the lift guarantee.

``classic``: :func:`privwatch.release.classic_report` of the released table (released observed
columns as quasi-identifiers, each sensitive column) and of the input, for contrast.

``attack``: the release the audit publishes is fitted on every record, so no record is outside
it; an attack with a control set needs records that were not. The audit therefore repeats the
release search (same settings, same epsilon) on a random half of the records (the *targets*),
maps the other half (the *control*) through the generalisation fitted on the targets
(:func:`map_through`), and runs :func:`privwatch.release.inference_attack` (anonymeter's design,
Giomi et al., PoPETs 2023). The exact Bayes attacker's success is computed on the published
release itself, from its joint ``p[s, cell]`` (:func:`privwatch.release.bayes_attack_success`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..release import (
    SUPPRESSED,
    ReleaseResult,
    as_text,
    bayes_attack_success,
    classic_report,
    inference_attack,
)
from ._leakage import release_joint

__all__ = [
    "ATTACK_RISK_THRESHOLD",
    "attack_section",
    "classic_section",
    "map_through",
    "mapping_table",
]

#: The attack passes when the upper end of its risk interval is at most this (a common choice,
#: not a standard: anonymeter reports the risk without a threshold).
ATTACK_RISK_THRESHOLD = 0.10
ATTACK_REFERENCE = "Giomi et al., PoPETs 2023 (anonymeter's inference evaluator)"
BAYES_REFERENCE = "Smith, FoSSaCS 2009 (min-entropy leakage); Braun et al., MFPS 2009"


def classic_section(
    frame: pd.DataFrame, released: pd.DataFrame, sensitive: Sequence[str], observed: Sequence[str]
) -> dict[str, Any]:
    """Classic measures of the release and of the input, per sensitive attribute."""
    sens, obs = list(sensitive), list(observed)
    rel = released[obs].reset_index(drop=True).copy()
    for s in sens:
        rel[s] = frame[s].to_numpy()
    inp = frame[[*obs, *sens]].reset_index(drop=True)
    return {
        "release": classic_report(rel, obs, sens).to_dict(),
        "input": classic_report(inp, obs, sens).to_dict(),
    }


def _keys(frame: pd.DataFrame, observed: Sequence[str]) -> pd.Series:
    text = [as_text(frame[c].reset_index(drop=True)) for c in observed]
    out = text[0]
    for t in text[1:]:
        out = out + "\x1f" + t
    return out


def mapping_table(
    frame: pd.DataFrame, released: pd.DataFrame, observed: Sequence[str]
) -> pd.DataFrame:
    """The fitted generalisation as a table: each distinct input tuple and its released tuple.

    Global and local recoding both release a function of the input tuple, so the table is the
    whole mechanism (a local recoding has no shorter description).
    """
    obs = list(observed)
    left = pd.DataFrame({c: as_text(frame[c].reset_index(drop=True)) for c in obs})
    right = released[obs].reset_index(drop=True).astype(str)
    right.columns = [f"released:{c}" for c in obs]
    both = pd.concat([left, right], axis=1).drop_duplicates(subset=obs)
    return both.reset_index(drop=True)


def map_through(
    table: pd.DataFrame, new: pd.DataFrame, observed: Sequence[str]
) -> tuple[pd.DataFrame, np.ndarray]:
    """Release ``new`` records through a :func:`mapping_table`.

    A record whose tuple of observed values was never seen at fit time is released as the
    suppressed cell (``*`` in every column); the second result flags those records.
    """
    obs = list(observed)
    index = pd.Index(_keys(table, obs))
    pos = index.get_indexer(pd.Index(_keys(new, obs)))
    unseen = pos < 0
    out = pd.DataFrame(index=range(len(new)))
    for c in obs:
        col = table[f"released:{c}"].to_numpy(dtype=object)
        out[c] = np.where(unseen, SUPPRESSED, col[np.where(unseen, 0, pos)])
    return out, unseen


def attack_section(
    source: pd.DataFrame,
    found: ReleaseResult,
    sensitive: Sequence[str],
    observed: Sequence[str],
    search: Callable[[pd.DataFrame], ReleaseResult],
    rng: int = 0,
) -> dict[str, Any]:
    """The inference attack with a control set and the exact Bayes attacker (module docstring).

    ``search`` refits the release, with the audit's settings, on the frame it is given.
    """
    sens, obs = list(sensitive), list(observed)
    n = len(source)
    perm = np.random.default_rng(rng).permutation(n)
    half = n // 2
    train_rows, control_rows = np.sort(perm[:half]), np.sort(perm[half:])
    train = source.iloc[train_rows].reset_index(drop=True)
    control = source.iloc[control_rows].reset_index(drop=True)
    fit = search(train)
    table = mapping_table(train, fit.released, obs)
    control_released, unseen = map_through(table, control, obs)
    released = fit.released[obs].reset_index(drop=True).copy()
    attributes: dict[str, Any] = {}
    for s in sens:
        rel = released.assign(**{s: train[s].to_numpy()})
        ctl = control_released.assign(**{s: control[s].to_numpy()})
        joint = release_joint(source[s].reset_index(drop=True), found.released[obs])
        res = inference_attack(rel, rel, ctl, obs, s, joint=joint, rng=rng)
        prior = float(source[s].value_counts(normalize=True).iloc[0])
        bayes = float(bayes_attack_success(joint))
        bound = prior * math.exp(found.epsilon)
        entry = res.to_dict()
        entry.update(
            {
                "threshold": ATTACK_RISK_THRESHOLD,
                "rule": "upper end of risk_ci <=",
                "passes": bool(res.risk_ci[1] <= ATTACK_RISK_THRESHOLD),
                "reference": ATTACK_REFERENCE,
                "prior_success": prior,
                "bayes_success": bayes,
                "bayes_leakage_ratio": bayes / prior,
                "bayes_leakage_bound": min(1.0, bound) / prior,
                "bayes_passes": bool(bayes <= min(1.0, bound) + 1e-12),
                "bayes_reference": BAYES_REFERENCE,
            }
        )
        attributes[s] = entry
    return {
        "design": (
            "release searched again with the same settings on a random half of the records "
            "(targets); the other half (control) released through the generalisation fitted on "
            "the targets, a tuple never seen there suppressed to '*'; Bayes attacker exact on the "
            "published release"
        ),
        "n_targets": len(train),
        "n_control": len(control),
        "control_unseen_tuples": int(unseen.sum()),
        "attack_release_satisfied": bool(fit.satisfied),
        "attributes": attributes,
    }
