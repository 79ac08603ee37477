"""Stacked fits against fits one after another, on 2 CPU threads (issue 34).

One function per learned family (add a family: one function and one line in :data:`FAMILIES`);
each fits the same models twice, ``fit_many(..., stack=False)`` (one after another) and
``fit_many(...)`` (one stacked program), and reports both times and how far the two results are
apart (they are the same arithmetic up to float rounding).

* ``obfuscator``: 8 generator/classifier pairs (4 budgets x 2 seeds) on the synthetic users of
  ``romanelli2020_obfuscation`` with that experiment's settings (hits 5, 50 generator epochs,
  20 classifier epochs), cut to ``--obf-iters`` Algorithm-1 iterations (patience above it, so
  every member runs them all);
* ``ppan_curve``: the 20-point continuous PPAN curve of ``tripathy2019_gaussian`` (scalar case,
  useful data: seed-noise mechanism, 8,000 samples per point, a fresh draw per point), cut to
  ``--ppan-epochs`` epochs;
* ``classifier_lift``: ``ClassifierLift.fit_score`` (cv 5 x 3 repeats, 2 ensemble members) on
  100,000 records, cut to ``--lift-epochs`` epochs; one after another is
  ``privwatch.estimators._stacking.one_after_another``; the result compared is the held-out
  (cross-fitted) log-loss.

Run: python benchmarks/bench_stacked.py [--quick] [--only obfuscator,ppan_curve] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from _timing import emit

from privwatch.adversarial import fit_many


def _timed(fit: Callable[[], list[Any]]) -> tuple[float, list[Any]]:
    t0 = time.perf_counter()
    fitted = fit()
    return time.perf_counter() - t0, fitted


def _compare(
    build: Callable[[], list[Any]], data: Any, describe: Callable[[Any], np.ndarray]
) -> dict[str, Any]:
    """Both fits of the models ``build()`` makes on ``data``: seconds, speed-up and the largest
    difference between the members' ``describe`` (a vector of results)."""
    one_s, one = _timed(lambda: fit_many(build(), data, stack=False))
    stacked_s, stacked = _timed(lambda: fit_many(build(), data))
    diff = max(
        float(np.abs(describe(a) - describe(b)).max()) for a, b in zip(one, stacked, strict=True)
    )
    return {
        "models": len(one),
        "one_after_another_seconds": one_s,
        "stacked_seconds": stacked_s,
        "speedup": one_s / stacked_s,
        "max_abs_result_difference": diff,
    }


def obfuscator(quick: bool, iters: int) -> dict[str, Any]:
    """8 obfuscators (4 budgets x 2 seeds), the synthetic experiment's settings."""
    from privwatch.adversarial import Obfuscator
    from privwatch.datasets import synthetic_users

    data = synthetic_users(rng=0)
    settings: dict[str, Any] = {
        "hits": 5,
        "generator_epochs": 50,
        "classifier_epochs": 20,
        "classifier_lr": 0.002,
        "generator_batch_size": 256,
        "generator_lr": 0.0002,
        "max_iter": iters,
        "patience": iters + 1,
    }
    if quick:
        settings |= {"generator_epochs": 2, "classifier_epochs": 2, "max_iter": 2}
    budgets = (173.0, 220.0, 270.0, 320.0)

    def build() -> list[Any]:
        return [Obfuscator(b, rng=s, **settings) for s in (0, 1) for b in budgets]

    def describe(ob: Any) -> np.ndarray:
        measured = [r[k] for r in ob.history_ for k in ("val_accuracy", "val_distortion")]
        return np.concatenate([ob.release(data.test[:200], rng=0).ravel() / 1000, measured])

    row = _compare(build, (data.train, data.train_sensitive), describe)
    row |= {"iterations": settings["max_iter"], "train_points": len(data.train)}
    row["note"] = "result difference: releases in km and the held-out records"
    return row


def ppan_curve(quick: bool, epochs: int) -> dict[str, Any]:
    """The 20 points of the scalar Gaussian useful-data curve (tripathy2019_gaussian)."""
    from pathlib import Path

    import privwatch.gallery
    from privwatch.gallery import tripathy2019_gaussian as tg

    folder = Path(privwatch.gallery.__file__).parent / "configs"
    cfg = json.loads((folder / "tripathy2019_gaussian_scalar.json").read_text())["settings"]
    cfg["ppan"] = {**cfg["ppan"], "epochs": 1 if quick else epochs}
    if quick:
        cfg["n_train"] = 1000
    case = tg._case(cfg, "useful")
    deltas = tg._deltas(case)
    seeds = tg._seeds(cfg)["useful"]
    draws = [tg._draw(cfg, "useful", s) for s in seeds]
    data = [train for train, _ in draws]

    def build() -> list[Any]:
        with torch.random.fork_rng(devices=[]):  # build() seeds torch's global generator
            return [
                tg.build(d, float(x), case, s) for d, x, s in zip(data, deltas, seeds, strict=True)
            ]

    def describe(ppan: Any) -> np.ndarray:
        w = draws[0][1][0][:500]
        record = [r[k] for r in ppan.history_ for k in ("log_likelihood", "distortion")]
        return np.concatenate([ppan.release(w, rng=1).ravel(), record])

    row = _compare(build, data, describe)
    row |= {"epochs": cfg["ppan"]["epochs"], "samples_per_point": cfg["n_train"]}
    return row


def _lift_records(n: int) -> tuple[Any, np.ndarray]:
    """``n`` records of 8 numeric and 2 text columns; a 3-valued sensitive column that depends
    on 4 of them."""
    import pandas as pd

    g = np.random.default_rng(0)
    x = g.standard_normal((n, 8))
    c1, c2 = g.choice(list("abcd"), n), g.choice(list("xyz"), n)
    score = x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + (c1 == "a") + g.standard_normal(n)
    s = np.digitize(score, [-0.5, 0.8])
    frame = pd.DataFrame(x, columns=[f"x{j}" for j in range(8)]).assign(c1=c1, c2=c2)
    return frame, s


def classifier_lift(quick: bool, epochs: int) -> dict[str, Any]:
    """``fit_score`` of ``ClassifierLift`` (cv 5 x 3 repeats, 2 ensemble members: the full fit
    and 15 fold estimators, 32 networks) on 100,000 records, cut to ``epochs`` epochs (patience
    above them), one network after another and stacked; the held-out log-loss is each record's
    cross-fitted -log P(s | x) (P from the out-of-fold log-lift and the prior)."""
    from privwatch.estimators import ClassifierLift
    from privwatch.estimators._stacking import one_after_another

    n = 3_000 if quick else 100_000
    frame, s = _lift_records(n)
    prior = np.bincount(s) / n
    settings = {"epochs": 1 if quick else epochs, "n_ensemble": 2, "patience": 1_000, "rng": 0}

    def fit() -> tuple[float, float]:
        t0 = time.perf_counter()
        scores = ClassifierLift(**settings).fit_score(frame, s, cv=5, n_repeats=3)
        seconds = time.perf_counter() - t0
        log_post = scores.log_lift + np.log(prior)[None, :]
        return seconds, float(-log_post[np.arange(n), s].mean())

    with one_after_another():
        one_s, one_loss = fit()
    stacked_s, stacked_loss = fit()
    return {
        "models": 32,
        "records": n,
        "epochs": settings["epochs"],
        "one_after_another_seconds": one_s,
        "stacked_seconds": stacked_s,
        "speedup": one_s / stacked_s,
        "held_out_log_loss_one_after_another": one_loss,
        "held_out_log_loss_stacked": stacked_loss,
        "max_abs_result_difference": abs(one_loss - stacked_loss),
    }


#: family -> (function, its argument from the command line)
FAMILIES: dict[str, tuple[Callable[..., dict[str, Any]], str]] = {
    "obfuscator": (obfuscator, "obf_iters"),
    "ppan_curve": (ppan_curve, "ppan_epochs"),
    "classifier_lift": (classifier_lift, "lift_epochs"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    ap.add_argument("--only", default=",".join(FAMILIES))
    ap.add_argument("--obf-iters", type=int, default=3)
    ap.add_argument("--ppan-epochs", type=int, default=5)
    ap.add_argument("--lift-epochs", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(2)
    out: dict[str, Any] = {
        "cpu": platform.processor() or platform.machine(),
        "cpu_threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
    for name in args.only.split(","):
        fn, arg = FAMILIES[name]
        out[name] = fn(args.quick, getattr(args, arg))
        print(name, out[name], flush=True)
    emit(out, args.out)


if __name__ == "__main__":
    main()
