"""Re-identification risk of the release and of the input (issue #44; docs/reidentification.md).

The released observed columns (and, for contrast, the input's) are the quasi-identifiers; their
classes' sizes ``f_k`` in the records give the prosecutor risk. The population's class sizes
``F_k`` come, in this order, from a population table (``population``: a file of counts of
quasi-identifier combinations, columns = the observed columns and ``count``), from design
weights (``weights``: ``F_k`` = the sum of the class's weights), from a sampling fraction
(``F_k = f_k / fraction``), or are the sample's own (the records are the population). Every
figure is a function of those counts (:mod:`privwatch.measures`); records are counted, never
listed. So a count table serves as well as the records (``counts``: each row's records; the
engine route's folded table of observed tuple x sensitive value, no pass over the records).

A population table counts *input* combinations: for the release its counts are carried through
the generalisation the audit found (each input combination seen in the records to its released
cell); a combination the records do not hold cannot be placed and is left out, so the release's
``F_k`` are lower bounds and its journalist and marketer risks upper bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..engines import read_table
from ..exceptions import ValidationError
from ..measures import (
    global_risk,
    household_risk,
    individual_risk,
    journalist_risk,
    k_map,
    marketer_risk,
    population_uniques,
    zayatz_uniques,
)
from ..release.hierarchies import KeyCodes

__all__ = ["RISK_THRESHOLD", "read_population", "reid_section"]

#: The highest acceptable re-identification risk of a record in a public release (every class
#: of at least 11): El Emam, Guide to the De-Identification of Personal Health Information, CRC
#: 2013; EMA policy 0070 and Health Canada's guidance for clinical reports use the same 0.09.
RISK_THRESHOLD = 0.09
RISK_REFERENCE = "El Emam 2013 (public release; EMA policy 0070, Health Canada)"
#: Bootstrap replicates of the population-uniques interval (classes resampled with replacement).
CI_REPLICATES = 30
COUNT_COLUMN = "count"


def read_population(path: str | Path, observed: Sequence[str]) -> pd.DataFrame:
    """A population table: one row per combination of ``observed`` values and its ``count``."""
    table = read_table(Path(path))
    missing = [c for c in [*observed, COUNT_COLUMN] if c not in table.columns]
    if missing:
        raise ValidationError(
            f"`population` must hold the observed columns and `{COUNT_COLUMN}`; missing "
            f"{missing} in {Path(path).name}."
        )
    counts = pd.to_numeric(table[COUNT_COLUMN], errors="coerce")
    if counts.isna().any() or (counts < 1).any():
        raise ValidationError("`population` counts must be numbers of at least 1.")
    out = table[list(observed)].astype(str)
    out[COUNT_COLUMN] = counts.to_numpy(dtype=np.float64)
    return out.groupby(list(observed), observed=True, sort=False)[COUNT_COLUMN].sum().reset_index()


def _class_ids(
    frame: pd.DataFrame,
    observed: Sequence[str],
    counts: np.ndarray | None,
    keys: KeyCodes | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's class (``inverse``) and the classes' sizes (``counts``: each row's records;
    None: one record a row). ``keys``: the table ``frame``'s columns are the columns of,
    factorised once for every reader (the engine route's count table): the same codes."""
    if keys is None or not all(keys.holds(c, frame[c]) for c in observed):
        keys = KeyCodes(frame)
    raw = []
    for c in observed:
        col = frame[c]
        # integers and strings group as their text does, with no copy to text; floats (0.0
        # and -0.0: one value, two texts) and mixed objects go through text
        exact = col.dtype.kind in "biu" or pd.api.types.is_string_dtype(col.dtype)
        if exact and col.dtype == object:
            exact = keys.inferred(c) in ("string", "integer", "boolean")
        raw.append(exact)
    inverse = keys.tuple_codes(list(observed), raw)
    return inverse, np.bincount(inverse, weights=counts).astype(np.float64)


def _uniques_ci(f: np.ndarray, big_n: float, estimator: str, seed: int) -> list[float] | None:
    """A 95 % bootstrap interval of the chosen estimator: the sample's classes resampled."""
    if estimator not in ("pitman", "zayatz", "snb"):
        return None
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    for _ in range(CI_REPLICATES):
        sizes = rng.choice(f, f.size, replace=True)
        n = float(sizes.sum())
        if n > big_n:
            continue
        est = population_uniques(sizes, max(big_n, n))
        value = {"pitman": est.pitman, "zayatz": est.zayatz, "snb": est.snb}[estimator]
        if value is None:
            value = zayatz_uniques(sizes, max(big_n, n))
        draws.append(float(value))
    if len(draws) < 10:
        return None
    return [float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))]


def _part(
    keys: pd.DataFrame,
    observed: Sequence[str],
    options: dict[str, Any],
    population: pd.DataFrame | None,
    coded: KeyCodes | None = None,
    rows: bool = True,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The figures of one table (the release or the input) and its per-row risks (``rows``
    False: not built, an empty frame; a frame of a count table's 1.9 M rows costs more than
    the figures)."""
    counts = options["counts"]
    inverse, f = _class_ids(keys, observed, counts, coded)
    n = float(f.sum())
    weights, fraction, threshold = options["weights"], options["fraction"], options["threshold"]
    source = "none"
    uniques: dict[str, Any]
    if population is not None:
        source = "population table"
        first = keys[list(observed)].astype(str).groupby(inverse, sort=True).first()
        merged = first.merge(population, how="left", on=list(observed))
        big_f = np.maximum(merged[COUNT_COLUMN].fillna(0).to_numpy(dtype=np.float64), f)
        pop_sizes = population[COUNT_COLUMN].to_numpy(dtype=np.float64)
        uniques = {
            "estimate": float((pop_sizes == 1).sum()),
            "ci": None,
            "estimator": "population table",
            "rule": "counted in the population table",
        }
        record_risk = 1.0 / big_f
    else:
        if weights is not None:
            source = "weights"
            big_f = np.maximum(np.bincount(inverse, weights=weights), f)
        elif fraction is not None:
            source = "sampling fraction"
            big_f = f / fraction
        else:
            big_f = f.copy()
        big_n = max(float(big_f.sum()), n)
        chosen = population_uniques(f, big_n)
        uniques = {
            "estimate": chosen.estimate,
            "ci": _uniques_ci(f, big_n, chosen.estimator, options["seed"]),
            "estimator": chosen.estimator,
            "rule": chosen.why,
        }
        record_risk = individual_risk(f, big_f)
    journalist = journalist_risk(f, big_f)
    marketer = record_risk[inverse]
    per_record = pd.DataFrame(
        {
            "reid_prosecutor": (1.0 / f)[inverse],
            "reid_journalist": (1.0 / big_f)[inverse],
            "reid_marketer": marketer,
        }
        if rows
        else {}
    )
    part: dict[str, Any] = {
        "n_records": int(n),
        "n_classes": int(f.size),
        "population_source": source,
        "prosecutor_max": float(1.0 / f.min()),
        "prosecutor_mean": float(f.size / n),
        "journalist_max": journalist.max,
        "marketer": (
            marketer_risk(f, big_f) if population is not None else global_risk(f, record_risk) / n
        ),
        "population_uniques": uniques,
        "global_risk": global_risk(f, record_risk),
        "records_above_threshold": int(np.dot(marketer > threshold, _ones(counts, inverse))),
        "k_map": k_map(f, big_f) if population is not None else None,
        "household_risk_max": None,
    }
    if options["cluster"] is not None:
        house = household_risk(np.minimum(marketer, 1.0), options["cluster"])
        part["household_risk_max"] = float(house.max())
        if rows:
            per_record["reid_household"] = house
    return part, per_record


def _ones(counts: np.ndarray | None, inverse: np.ndarray) -> np.ndarray:
    """Each row's records (1 a row without ``counts``)."""
    return np.ones(inverse.size) if counts is None else np.asarray(counts, dtype=np.float64)


def reid_section(
    frame: pd.DataFrame,
    released: pd.DataFrame,
    observed: Sequence[str],
    *,
    sampling_fraction: float | None = None,
    weights: np.ndarray | None = None,
    population: pd.DataFrame | None = None,
    cluster: np.ndarray | None = None,
    threshold: float = RISK_THRESHOLD,
    seed: int = 0,
    counts: np.ndarray | None = None,
    keys: tuple[KeyCodes | None, KeyCodes | None] = (None, None),
    per_record: bool = True,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """``leakage["reidentification"]`` (``release`` and ``input`` parts, the threshold and
    where the population counts came from) and the release's per-record risks
    (``reid_prosecutor``, ``reid_journalist``, ``reid_marketer``), aligned with ``released``.

    ``frame`` and ``released`` hold the same records in the same order (the input's and the
    released observed columns); ``weights`` and ``cluster`` one value per record.
    ``counts``: the rows are a count table, each row that many records (then no ``weights``
    or ``cluster``, which need the records); the per-row risks are then per row.
    ``keys``: ``frame``'s and ``released``'s columns factorised once for every reader (the
    engine route's, :class:`~privwatch.release.hierarchies.KeyCodes`); the same figures.
    ``per_record`` False: the per-record risks are not built (an empty frame; the engine
    route labels no record from them).
    """
    if counts is not None and (weights is not None or cluster is not None):
        raise ValidationError("`weights` and `cluster_id` need the records, not a count table.")
    obs = list(observed)
    options = {
        "weights": weights,
        "fraction": sampling_fraction,
        "threshold": threshold,
        "cluster": cluster,
        "seed": seed,
        "counts": None if counts is None else np.asarray(counts, dtype=np.float64),
    }
    inp = frame[obs].reset_index(drop=True)
    rel = released[obs].reset_index(drop=True)
    rel_population = None
    if population is not None:
        # carry the input combinations' counts to their released cells
        pairs = pd.concat(
            [inp.astype(str), rel.astype(str).add_prefix("released:")], axis=1
        ).drop_duplicates(subset=obs)
        joined = population.merge(pairs, how="inner", on=obs)
        rel_population = (
            joined.groupby([f"released:{c}" for c in obs], sort=False)[COUNT_COLUMN]
            .sum()
            .reset_index()
        )
        rel_population.columns = [*obs, COUNT_COLUMN]
    release_part, risks = _part(rel, obs, options, rel_population, keys[1], per_record)
    input_part, _ = _part(inp, obs, options, population, keys[0], rows=False)
    section = {
        "threshold": threshold,
        "threshold_reference": RISK_REFERENCE,
        "release": release_part,
        "input": input_part,
    }
    return section, risks
