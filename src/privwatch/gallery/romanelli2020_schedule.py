"""Romanelli, Chatzikokolakis, Palamidessi: Table II under the paper's protocol, the paper's
starting mechanisms G0 and the paper's classifier schedule (synthetic data).

Algorithm 1 with the paper's Laplace-seeded generator
(:class:`privwatch.adversarial.Obfuscator`, ``generator="laplace"``), fitted on the training
users' locations only, in two sweeps:

* ``schedule``: L = 173 m (Table II's case), G0 the paper's planar Laplace ln 2 / 100 (§III-C,
  §IV-A: "we have defined G0 as L^eps with eps = ln 2 / 100"), the paper's generator settings of
  §IV-B (30 epochs per iteration, batch 512, step 1e-4) and 24 iterations (Table II is measured
  at the 24th), with the classifier trained for each of ``classifier_epochs`` epochs per
  iteration (batch 512, step 1e-3; the paper: 3,000), with ``obfuscator_at_epochs[str(epochs)]``
  updating the settings of one epoch count (fewer iterations for the paper's 3,000 epochs);
* ``seeds``: the starting mechanism G0 = the planar Laplace of each epsilon of a case's ``inits``
  (the paper's spread-out ln 2 / 100, the budget-matched Laplace of the case, ln 2 / 60 at
  L = 173 m, or ours, 20 / L: expected displacement L / 10, the default of ``Obfuscator``), with
  ``seeds.obfuscator`` updated by the case's own ``obfuscator`` settings;
* ``ours``: the generators of ours (``romanelli2020_obfuscation_synthetic``'s "anchors" and
  "anchors vs Bayes attacker", :func:`privwatch.gallery.romanelli2020_learned.fit_learned`,
  the same settings and seed), refitted and judged by the same protocol.

``sweeps`` names the sweeps a run fits (all three by default); a run of some of them can be
merged into an earlier record (:func:`merge`).

Every fitted mechanism is frozen and judged on the test users: Bayes errors B(X | Z) on grids
(eq. 24-26) at ``hits`` releases per point, and Table II's protocol
(:func:`privwatch.gallery.fresh.fresh_attacker`): a classifier trained afterwards on fresh
releases of the training points (10 per point, 10 % held out for validation), accuracy and macro
F1 on train, validation and on fresh releases of the test points. The kept generator is the one
whose held-out releases Algorithm 1's own classifier guessed worst (ours; the paper reports the
24th iteration).
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path
from typing import Any

import torch

from ..adversarial import Obfuscator
from .romanelli2020_learned import fit_learned, fresh_on, ln2_over, load, table

#: the sweeps of a full run, in the order of the record
SWEEPS = ("schedule", "seeds", "ours")


def init_epsilon(spec: str, budget: float) -> float:
    """``"ln2/100"`` -> ln 2 / 100 per metre; ``"20/L"`` -> 20 / budget."""
    if spec.startswith("ln2/"):
        return ln2_over(spec)
    if spec.endswith("/L"):
        return float(spec.split("/")[0]) / budget
    raise ValueError(f"`init` must look like 'ln2/100' or '20/L'; got {spec!r}.")


def judge(ob: Obfuscator, data: Any, cfg: dict[str, Any]) -> dict[str, Any]:
    """A frozen mechanism on the test users: grid Bayes errors at every hit count and Table II's
    protocol (a classifier trained afterwards on fresh releases), with Algorithm 1's record."""
    seed = cfg["seed"]
    return {
        "test": table(data.test, data.test_sensitive, ob.release, cfg["bounds_m"], cfg, seed + 1),
        "fresh_attacker": fresh_on(data, ob.release, repeat=cfg["fresh_attacker_hits"], seed=seed),
        "val_accuracy": ob.val_accuracy_,
        "best_iteration": ob.best_epoch_ + 1,
        "iterations": ob.n_iter_,
        "val_accuracy_per_iteration": ob.history_.column("val_accuracy"),
    }


def fit_one(job: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    """Fit one mechanism (Algorithm 1 from the planar Laplace G0 of ``job["init"]``, or a
    generator of ours, ``job["kind"]``) and judge it on the test users."""
    torch.set_num_threads(1)
    seed = cfg["seed"]
    data = load(cfg["dataset"], seed)
    budget = float(job["L"])
    t0 = time.perf_counter()
    if "kind" in job:  # ours: the synthetic experiment's fit, with its settings and seed
        ob, params, candidates = fit_learned(job["kind"], budget, data, job, job, seed)
        head: dict[str, Any] = {"L": budget, "kind": job["kind"], "params": params}
        head["candidates"] = candidates
    else:
        eps = init_epsilon(job["init"], budget)
        ob = Obfuscator(budget, generator="laplace", init_epsilon=eps, rng=seed, **job["params"])
        ob.fit(data.train, data.train_sensitive)
        head = {"L": budget, "init": job["init"], "init_epsilon": eps}
        head.update(init_expected_distortion_m=2.0 / eps, params=job["params"])
    fit_s = time.perf_counter() - t0
    return {**head, **judge(ob, data, cfg), "fit_seconds": fit_s}


def jobs(cfg: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(sweep, key, job) for every fit of the sweeps ``cfg["sweeps"]`` (default: all), the
    longest first within a sweep. A job of ``ours`` carries the synthetic experiment's
    ``obfuscator`` / ``obfuscator_anchors`` / ``obfuscator_bayes`` settings for
    :func:`~privwatch.gallery.romanelli2020_learned.fit_learned`."""
    sweeps = cfg.get("sweeps", SWEEPS)
    unknown = sorted(set(sweeps) - set(SWEEPS))
    if unknown:
        raise ValueError(f"`sweeps` must name sweeps among {list(SWEEPS)}; got {unknown}.")
    out: list[tuple[str, str, dict[str, Any]]] = []
    sch = cfg["schedule"]
    for epochs in sorted(sch["classifier_epochs"], reverse=True) if "schedule" in sweeps else []:
        params = {**sch["obfuscator"], "classifier_epochs": epochs}
        params.update(sch.get("obfuscator_at_epochs", {}).get(str(epochs), {}))
        out.append(
            ("schedule", f"epochs={epochs}", {"L": sch["L"], "init": sch["init"], "params": params})
        )
    for case in cfg["seeds"]["cases"] if "seeds" in sweeps else []:
        for name, spec in case["inits"].items():
            params = {**cfg["seeds"]["obfuscator"], **case.get("obfuscator", {})}
            out.append(
                ("seeds", f"L={case['L']}/{name}", {"L": case["L"], "init": spec, "params": params})
            )
    ours = cfg["ours"] if "ours" in sweeps else {"cases": []}
    for L in ours["cases"]:
        for kind in ours["kinds"]:
            job = {"L": L, "kind": kind, **{k: v for k, v in ours.items() if k.startswith("obf")}}
            out.append(("ours", f"L={L}/{kind}", job))
    return out


def draw(results: dict[str, Any], cells: int, hits: int, out: Path) -> None:
    """Bayes error and the fresh attacker's test accuracy against the classifier's epochs."""
    import matplotlib.pyplot as plt

    from ..plotting import save

    rows = sorted(results["schedule"].values(), key=lambda r: r["params"]["classifier_epochs"])
    epochs = [r["params"]["classifier_epochs"] for r in rows]
    bayes = [r["test"][f"{hits} hits"][f"{cells}x{cells}"] for r in rows]
    acc = [r["fresh_attacker"]["test_accuracy"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(epochs, bayes, "o-", label=f"Bayes error (test, {cells}^2 cells, {hits} hits)")
    ax.plot(epochs, acc, "s-", label="fresh classifier accuracy (Table II protocol, test)")
    ax.axhline(0.42, color="C0", ls=":", label="paper Fig. 9(b), 3,000 epochs: 0.42")
    ax.axhline(0.52, color="C1", ls=":", label="paper Table II, 3,000 epochs: 0.52")
    ax.set_xscale("log")
    ax.set_xlabel("classifier epochs per iteration of Algorithm 1")
    its = ", ".join(f"{e}: {r['iterations']}" for e, r in zip(epochs, rows, strict=True))
    ax.set_title(f"Alg. 1, synthetic, L = 173 m; iterations (epochs: n) {its}", fontsize=9)
    ax.legend(fontsize=7)
    save(fig, out / "schedule_trend.png")


def run_schedule(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """The sweeps of ``cfg["sweeps"]``, ``n_jobs`` fits side by side; the trend figure of the
    classifier schedule into ``out`` when the run has that sweep."""
    from joblib import Parallel, delayed

    t0 = time.perf_counter()
    todo = jobs(cfg)
    fits = Parallel(n_jobs=min(cfg["n_jobs"], len(todo)))(
        delayed(fit_one)(job, cfg) for _, _, job in todo
    )
    results: dict[str, Any] = {"dataset": cfg["dataset"]}
    results.update({sweep: {} for sweep in cfg.get("sweeps", SWEEPS)})
    for (sweep, key, _), entry in zip(todo, fits, strict=True):
        node = results[sweep]
        *parents, leaf = key.split("/")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = entry
    results["wall_seconds"] = time.perf_counter() - t0
    results["cpu_note"] = f"{math.fsum(e['fit_seconds'] for e in fits):.0f} s of fitting in all"
    if results.get("schedule"):
        draw(results, max(cfg["grid_cells"]), max(cfg["hits"]), out)
    return results


def _fits(node: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """``/``-joined key -> fit entry (a dict with ``fit_seconds``) of a nested sweep."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in node.items():
        if "fit_seconds" in value:
            out[prefix + key] = value
        else:
            out.update(_fits(value, f"{prefix}{key}/"))
    return out


def merge(record: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """The results of ``record`` with every fit of ``part`` (a run of some sweeps) added, or
    replacing the fit of the same key (``record`` itself is left as it was); the wall and CPU
    notes of every run are kept under ``runs``, each with the fits it made."""
    out = {
        k: copy.deepcopy(v)
        for k, v in record.items()
        if k not in ("wall_seconds", "cpu_note", "runs")
    }
    runs = record.get("runs") or [
        {
            "wall_seconds": record["wall_seconds"],
            "cpu_note": record["cpu_note"],
            "fits": [f"{s}/{k}" for s in SWEEPS for k in _fits(record.get(s, {}))],
        }
    ]
    made = []
    for sweep in SWEEPS:
        for key, entry in _fits(part.get(sweep, {})).items():
            node = out.setdefault(sweep, {})
            *parents, leaf = key.split("/")
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = entry
            made.append(f"{sweep}/{key}")
    new = {"wall_seconds": part["wall_seconds"], "cpu_note": part["cpu_note"], "fits": made}
    out["runs"] = [*runs, new]
    return out
