"""Romanelli, Chatzikokolakis, Palamidessi: the learned obfuscation mechanisms of the gallery and
how one is judged, shared by the experiments of :mod:`.romanelli2020_obfuscation` and
:mod:`.romanelli2020_schedule`.

The data sets (:func:`load`), the paper's Laplace epsilons (:func:`ln2_over`), the three learned
mechanisms (:data:`KINDS`, :func:`fit_learned`: Algorithm 1 with the paper's Laplace-seeded
generator, with the finite-support anchors generator, and the anchors generator against the
exact Bayes attacker), the grid Bayes errors of a frozen mechanism (:func:`table`, eq. 24-26)
and the fresh attacker trained on its releases (:func:`fresh_on`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..adversarial import Obfuscator
from ..datasets import LocationData, load_gowalla_paris, synthetic_users
from ..estimators import bayes_error_grid
from .fresh import attack_fresh_releases

__all__ = ["KINDS", "TITLES", "fit_learned", "fresh_on", "ln2_over", "load", "table"]


def ln2_over(spec: str) -> float:
    """``"ln2/100"`` -> the planar-Laplace epsilon ln 2 / 100 (per metre)."""
    return math.log(2) / float(spec.split("/")[1])


def fresh_on(
    data: LocationData, release: Callable[[np.ndarray, int], np.ndarray], *, repeat: int, seed: int
) -> dict[str, Any]:
    """:func:`~privwatch.gallery.fresh.attack_fresh_releases` on the train / test split of
    ``data``: a fresh attacker trained on the frozen mechanism's releases."""
    return attack_fresh_releases(
        release,
        data.train,
        data.train_sensitive,
        data.test,
        data.test_sensitive,
        repeat=repeat,
        seed=seed,
    )


def table(
    points: np.ndarray, users: np.ndarray, release: Any, half: float, cfg: dict[str, Any], seed: int
) -> dict[str, dict[str, float]]:
    """Grid Bayes errors and displacement of ``release(points, rng)`` for every hit count."""
    out: dict[str, dict[str, float]] = {}
    for hits in cfg["hits"]:
        src = np.repeat(points, hits, axis=0)
        lab = np.repeat(users, hits)
        z = release(src, np.random.default_rng(seed + hits))
        row = {
            f"{c}x{c}": bayes_error_grid(z, lab, bounds=(-half, half, -half, half), cells=c)
            for c in cfg["grid_cells"]
        }
        row["empirical_distortion_m"] = float(np.linalg.norm(z - src, axis=1).mean())
        out[f"{hits} hits"] = row
    return out


def load(name: str, seed: int) -> LocationData:
    """The data set ``"synthetic"`` (four users) or Gowalla Paris, split with ``seed``."""
    return synthetic_users(rng=seed) if name == "synthetic" else load_gowalla_paris(rng=seed)


#: the learned mechanisms: Algorithm 1 with the paper's Laplace-seeded generator, Algorithm 1 with
#: the finite-support anchors generator, and the anchors generator against the exact Bayes attacker
KINDS = ("laplace", "anchors", "bayes")


TITLES = {
    "laplace": "learned, Laplace-seeded generator",
    "anchors": "learned, anchors generator",
    "bayes": "learned, anchors vs Bayes attacker",
}


def fit_learned(
    kind: str, L: float, data: LocationData, cfg: dict[str, Any], c: dict[str, Any], seed: int
) -> tuple[Obfuscator, dict[str, Any], list[dict[str, Any]]]:
    """Fit one learned mechanism. ``bayes``: every candidate setting of
    ``obfuscator_bayes.candidates`` is fitted and the one whose Bayes attacker guessed worst on
    the obfuscator's own validation points is kept (no test data is used to choose)."""
    if kind != "bayes":
        params = {**cfg["obfuscator"], **c["obfuscator"], **c.get(f"obfuscator_{kind}", {})}
        ob = Obfuscator(L, generator=kind, rng=seed, **params)
        return ob.fit(data.train, data.train_sensitive), params, []
    spec = dict(cfg["obfuscator_bayes"])
    grid = spec.pop("candidates")
    names = sorted(grid)
    tried = []
    for values in itertools.product(*(grid[k] for k in names)):
        params = {**spec, **dict(zip(names, values, strict=True))}
        ob = Obfuscator(L, generator="anchors", attacker="bayes", rng=seed, **params)
        ob.fit(data.train, data.train_sensitive)
        tried.append((ob.val_accuracy_, params, ob))
    best = min(tried, key=lambda t: t[0])
    candidates = [{"params": p, "val_accuracy": a} for a, p, _ in tried]
    return best[2], best[1], candidates
