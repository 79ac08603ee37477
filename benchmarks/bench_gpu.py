"""CPU (2 threads) vs CUDA eager vs CUDA graph for the learned mechanisms (issues 22, 34).

(a) the PPAN useful-data curve (symmetric pair m = 10, p = 0.4, 1,000 samples per point, the
    experiment's settings: batch 100, 5 adversary steps, steps 0.05 / 0.1) at 20 and 200 points x
    3,000 mechanism steps (300 epochs x 10 batches), fitted as one stacked program by
    ``fit_many``. The CPU runs are cut to ``--cpu-epochs`` epochs and scaled to 300 (stated in
    the output); the CUDA runs are the full 300 epochs. Accuracy: worst excess over the optimum
    (true pmf, eq. 30) of every full-length curve.
(b) the Gowalla obfuscator (L = 1,150 m, Laplace-seeded generator, the experiment's settings)
    with the paper's 500 hits per training point: seconds per Algorithm-1 iteration, measured
    over ``--obf-iters`` iterations.
(c) ClassifierLift on 2,000,000 x 10 rows: measured only when ClassifierLift takes ``device=``.
(d) the digits PPAN (the experiment's networks, lambda = 10, 60 epochs): seconds per point.
(e) issue 34, stacked obfuscators: 8 Gowalla obfuscators (4 budgets x 2 seeds, the settings of
    (b)) as one stacked program: seconds per Algorithm-1 iteration for all 8, on the CPU
    (2 threads) stacked and one after another, and on CUDA stacked (eager and graph).
(f) issue 34, the digits curve: seeds x lambdas PPANs (the experiment's networks, gamma = 0)
    as one stacked program: seconds for the curve, CPU (2 threads) stacked and one after another
    cut to ``--cpu-epochs`` epochs and scaled, CUDA stacked (eager and graph) at 60 epochs.
(g) issue 34, the stacked lift estimators: ``ClassifierLift.fit_score`` (cv 5 x 3 repeats, 2
    ensemble members: 32 networks) on 2,000,000 x 10 rows cut to ``--lift-epochs`` epochs:
    seconds and held-out log-loss, CPU (2 threads) stacked and one after another (on
    ``--lift-cpu-rows`` records), CUDA stacked.

Each family is one function below; the CPU figures of a family are measured in the same run
as its CUDA figures.

Run: python benchmarks/bench_gpu.py [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import inspect
import platform
import time
import warnings
from typing import Any

import numpy as np
import torch
from _timing import emit

from privwatch.adversarial import PPAN, Obfuscator, fit_many
from privwatch.datasets import symmetric_pair

CFG: dict[str, Any] = {
    "lam": 500.0,
    "penalty": "expected",
    "batch_size": 100,
    "lr": 0.05,
    "adversary_lr": 0.1,
}
CFG |= {"adversary_steps": 5}


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def ppan_curve(n_points: int, epochs: int, device: str, graph: bool) -> tuple[float, float]:
    """(seconds, worst excess in nats) of one stacked useful-data curve."""
    deltas = np.linspace(0.0, 0.9, n_points)
    rng = np.random.default_rng(0)
    sets = [symmetric_pair(1000, m=10, p=0.4, observation="useful", rng=rng) for _ in deltas]
    models = [
        PPAN.finite(
            1 - np.eye(10),
            n_observed=10,
            n_sensitive=10,
            budget=float(d),
            epochs=epochs,
            rng=k,
            device=device,
            cuda_graph=graph,
            **CFG,
        )
        for k, d in enumerate(deltas)
    ]
    _sync()
    t0 = time.perf_counter()
    fitted = fit_many(models, [(s.observed, s.sensitive, s.useful) for s in sets])
    channels = [m.channel() for m in fitted]  # back on the host: the time includes it
    seconds = time.perf_counter() - t0
    if device != "cpu":
        assert all(m.cuda_graph_ == graph for m in fitted), "graph state differs from request"
    excess = []
    for s, k in zip(sets, channels, strict=True):
        mi, dist = s.evaluate(k)
        excess.append(mi - s.optimum(dist))
    return seconds, float(max(excess))


def obfuscator(device: str, iters: int, hits: int, graph: bool = False) -> tuple[float, Any]:
    """(seconds per Algorithm-1 iteration, the fitted obfuscator) of the Gowalla obfuscator at
    ``hits`` hits (the experiment's settings otherwise: L = 1,150 m, 100 generator epochs)."""
    from privwatch.datasets import load_gowalla_paris

    data = load_gowalla_paris(rng=0)
    ob = Obfuscator(
        1150.0,
        hits=hits,
        generator_epochs=100,
        max_iter=iters,
        patience=iters + 1,
        rng=0,
        device=device,
        cuda_graph=graph,
    )
    _sync()
    t0 = time.perf_counter()
    ob.fit(data.train, data.train_sensitive)
    _sync()
    return (time.perf_counter() - t0) / ob.n_iter_, ob


def digits_point(device: str, epochs: int) -> float:
    """Seconds for one digits PPAN (experiment networks, lambda = 10)."""
    from privwatch.adversarial import CategoricalAdversary, SeedNoiseMechanism
    from privwatch.datasets import load_digit_images

    data = load_digit_images(None, rng=0)
    n_pix = data.train.shape[1]
    mech = SeedNoiseMechanism(n_pix, n_pix, hidden=(256, 256), noise_dim=20)
    mech.net = torch.nn.Sequential(
        *[torch.nn.Tanh() if isinstance(m, torch.nn.ReLU) else m for m in mech.net],
        torch.nn.Sigmoid(),
    )
    adv = CategoricalAdversary(n_pix, 10, hidden=(256, 256))

    def ce(y: Any, z: Any) -> Any:
        z = z.clamp(1e-6, 1 - 1e-6)
        return -(y * z.log() + (1 - y) * (1 - z).log()).mean(dim=1)

    ppan = PPAN(
        mech, adv, ce, lam=10.0, penalty="lagrangian", epochs=epochs, batch_size=100, lr=1e-3
    )
    ppan.set_params(rng=0, device=device)
    _sync()
    t0 = time.perf_counter()
    ppan.fit(data.train, data.train_sensitive, data.train)
    ppan.release(data.test, rng=1)
    return time.perf_counter() - t0


def obfuscators_stacked(
    device: str, iters: int, hits: int, graph: bool, stack: bool = True
) -> dict[str, Any]:
    """(e): 8 Gowalla obfuscators (4 budgets x 2 seeds) fitted by ``fit_many``; seconds per
    iteration (for all 8) and their held-out accuracies."""
    from privwatch.datasets import load_gowalla_paris

    data = load_gowalla_paris(rng=0)
    models = [
        Obfuscator(
            budget,
            hits=hits,
            generator_epochs=100,
            max_iter=iters,
            patience=iters + 1,
            rng=seed,
            device=device,
            cuda_graph=graph,
        )
        for seed in (0, 1)
        for budget in (518.0, 800.0, 1150.0, 1500.0)
    ]
    _sync()
    t0 = time.perf_counter()
    fitted = fit_many(models, (data.train, data.train_sensitive), stack=stack)
    _sync()
    seconds = time.perf_counter() - t0
    return {
        "seconds_per_iter": seconds / iters,
        "val_accuracy": [m.val_accuracy_ for m in fitted],
        "graph": [m.cuda_graph_ for m in fitted],
    }


def digits_curve(
    device: str, seeds: int, points: int, epochs: int, graph: bool, stack: bool = True
) -> tuple[float, list[float]]:
    """(f): seconds for ``seeds`` x ``points`` digits PPANs (lambda from 40 down to 1, gamma
    = 0) fitted by ``fit_many``, and each one's last-epoch adversary log-likelihood."""
    from privwatch.adversarial import CategoricalAdversary, SeedNoiseMechanism
    from privwatch.datasets import load_digit_images

    data = load_digit_images(None, rng=0)
    n_pix = data.train.shape[1]

    def ce(y: Any, z: Any) -> Any:
        z = z.clamp(1e-6, 1 - 1e-6)
        return -(y * z.log() + (1 - y) * (1 - z).log()).mean(dim=1)

    models = []
    for seed in range(seeds):
        for lam in np.geomspace(40.0, 1.0, points):
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                mech = SeedNoiseMechanism(n_pix, n_pix, hidden=(256, 256), noise_dim=20)
                mech.net = torch.nn.Sequential(
                    *[torch.nn.Tanh() if isinstance(m, torch.nn.ReLU) else m for m in mech.net],
                    torch.nn.Sigmoid(),
                )
                adv = CategoricalAdversary(n_pix, 10, hidden=(256, 256))
            models.append(
                PPAN(
                    mech,
                    adv,
                    ce,
                    lam=float(lam),
                    penalty="lagrangian",
                    epochs=epochs,
                    batch_size=100,
                    lr=1e-3,
                    rng=seed,
                    device=device,
                    cuda_graph=graph,
                )
            )
    data_t = (data.train, data.train_sensitive, data.train)
    _sync()
    t0 = time.perf_counter()
    fitted = fit_many(models, data_t, stack=stack)
    _sync()
    return time.perf_counter() - t0, [m.history_[-1]["log_likelihood"] for m in fitted]


def _cpu_halves(args: Any) -> tuple[bool, ...]:
    """The CPU runs of (e), (f), (g): stacked, and one after another unless
    ``--cpu-stacked-only`` (the stacked-vs-one-by-one CPU ratio is bench_stacked.py's)."""
    return (True,) if args.cpu_stacked_only else (True, False)


def family_e(args: Any, cuda: bool) -> dict[str, Any]:
    """(e) stacked obfuscators: CPU stacked and one after another (2 iterations: the first
    has no generator steps), CUDA (``--obf-iters`` iterations)."""
    hits, iters = (5, 1) if args.quick else (args.obf_hits, args.obf_iters)
    cpu_iters = 1 if args.quick else 2
    row: dict[str, Any] = {"hits": hits, "models": 8, "cpu_iterations": cpu_iters}
    for stack in _cpu_halves(args):
        key = "cpu_stacked" if stack else "cpu_one_after_another"
        res = obfuscators_stacked("cpu", cpu_iters, hits, False, stack)
        row[f"{key}_seconds_per_iter"] = res["seconds_per_iter"]
    if cuda:
        for graph in (False, True):
            key = "cuda_graph" if graph else "cuda_eager"
            res = obfuscators_stacked("cuda", iters, hits, graph)
            row[f"{key}_seconds_per_iter"] = res["seconds_per_iter"]
            row[f"{key}_graph_used"] = all(res["graph"])
    return row


def family_f(args: Any, cuda: bool) -> dict[str, Any]:
    """(f) the digits curve: CPU stacked and one after another (cut, scaled), CUDA."""
    seeds, points = (1, 2) if args.quick else (args.digits_seeds, 20)
    full = 2 if args.quick else 60
    cut = 1 if args.quick else max(1, args.cpu_epochs // 10)
    row: dict[str, Any] = {"seeds": seeds, "points": points, "full_epochs": full, "cpu_epochs": cut}
    for stack in _cpu_halves(args):
        key = "cpu_stacked" if stack else "cpu_one_after_another"
        seconds, _ = digits_curve("cpu", seeds, points, cut, False, stack)
        row[f"{key}_scaled_seconds"] = seconds * full / cut
    if cuda:
        digits_curve("cuda", 1, 2, 1, False)  # warm-up
        for graph in (False, True):
            key = "cuda_graph" if graph else "cuda_eager"
            row[f"{key}_seconds"], _ = digits_curve("cuda", seeds, points, full, graph)
    return row


def lift_fit_score(device: str, n: int, epochs: int, stack: bool = True) -> tuple[float, float]:
    """(g): seconds and held-out log-loss (each record's cross-fitted -log P(s | x)) of
    ``ClassifierLift.fit_score`` (cv 5 x 3 repeats, 2 ensemble members: 32 networks, patience
    above ``epochs``) on ``n`` records x 10 numeric columns; ``stack=False``: one network
    after another (``privwatch.estimators._stacking.one_after_another``)."""
    import contextlib

    import pandas as pd

    from privwatch.estimators import ClassifierLift
    from privwatch.estimators._stacking import one_after_another

    g = np.random.default_rng(0)
    x = g.standard_normal((n, 10)).astype(np.float32)
    s = np.digitize(x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + g.standard_normal(n), [-0.5, 0.8])
    frame = pd.DataFrame(x, columns=[f"x{j}" for j in range(10)])
    est = ClassifierLift(epochs=epochs, n_ensemble=2, patience=1_000, rng=0, device=device)
    _sync()
    t0 = time.perf_counter()
    with contextlib.nullcontext() if stack else one_after_another():
        scores = est.fit_score(frame, s, cv=5, n_repeats=3)
    _sync()
    seconds = time.perf_counter() - t0
    log_post = scores.log_lift + np.log(np.bincount(s, minlength=3) / n)[None, :]
    return seconds, float(-log_post[np.arange(n), s].mean())


def family_g(args: Any, cuda: bool) -> dict[str, Any]:
    """(g) issue 34, the stacked lift estimators: ``fit_score`` on 2,000,000 x 10 rows; CPU
    (2 threads) stacked and one after another on ``--lift-cpu-rows`` records (default: the
    same 2,000,000), CUDA stacked (a CUDA graph per epoch)."""
    n = 20_000 if args.quick else 2_000_000
    cpu_n = min(n, args.lift_cpu_rows or n)
    epochs = 1 if args.quick else args.lift_epochs
    row: dict[str, Any] = {"records": n, "cpu_records": cpu_n, "epochs": epochs, "networks": 32}
    for stack in _cpu_halves(args):
        key = "cpu_stacked" if stack else "cpu_one_after_another"
        row[f"{key}_seconds"], row[f"{key}_log_loss"] = lift_fit_score("cpu", cpu_n, epochs, stack)
    if cuda:
        lift_fit_score("cuda", 20_000, 2)  # warm-up: kernels, allocator
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            row["cuda_seconds"], row["cuda_log_loss"] = lift_fit_score("cuda", n, epochs)
        row["cuda_graph_fallbacks"] = [str(w.message) for w in caught]
        if cpu_n == n:
            row["speedup_cuda_vs_cpu_stacked"] = row["cpu_stacked_seconds"] / row["cuda_seconds"]
            loss = row["cpu_stacked_log_loss"]
            row["log_loss_relative_difference"] = abs(row["cuda_log_loss"] - loss) / loss
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    ap.add_argument("--cpu-epochs", type=int, default=30)
    ap.add_argument("--obf-iters", type=int, default=3)
    ap.add_argument("--obf-full", action="store_true", help="(b): also the whole 300-iteration fit")
    ap.add_argument("--only", default="abcdefg")
    ap.add_argument("--lift-epochs", type=int, default=2, help="(g): epochs of each network")
    ap.add_argument("--lift-cpu-rows", type=int, default=0, help="(g): CPU records (0: all)")
    ap.add_argument("--obf-hits", type=int, default=500, help="(e): hits per training point")
    ap.add_argument("--digits-seeds", type=int, default=5, help="(f): seeds x 20 lambdas")
    ap.add_argument(
        "--cpu-stacked-only", action="store_true", help="(e-g): no CPU one-after-another run"
    )
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(2)
    cuda = torch.cuda.is_available()
    full_epochs = 4 if args.quick else 300
    cpu_epochs = 2 if args.quick else args.cpu_epochs
    points = (4, 8) if args.quick else (20, 200)
    out: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if cuda else "none",
        "cpu": platform.processor() or platform.machine(),
        "cpu_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "full_epochs": full_epochs,
        "cpu_epochs": cpu_epochs,
    }
    warnings.simplefilter("ignore")
    if "a" in args.only:
        for n in points:
            row: dict[str, Any] = {}
            s, _ = ppan_curve(n, cpu_epochs, "cpu", False)
            row["cpu_measured_seconds"] = s
            row["cpu_scaled_seconds"] = s * full_epochs / cpu_epochs
            if cuda:
                ppan_curve(n, 2, "cuda", True)  # warm-up: CUDA context, kernels, allocator
                for graph in (False, True):
                    s, ex = ppan_curve(n, full_epochs, "cuda", graph)
                    key = "cuda_graph" if graph else "cuda_eager"
                    row[f"{key}_seconds"], row[f"{key}_worst_excess"] = s, ex
                row["speedup_graph_vs_cpu"] = row["cpu_scaled_seconds"] / row["cuda_graph_seconds"]
            out[f"ppan_useful_{n}_points"] = row
            print(n, row, flush=True)
    if "b" in args.only:
        hits, iters = (5, 1) if args.quick else (500, args.obf_iters)
        row = {"hits": hits, "iterations": iters}
        row["cpu_seconds_per_iter"] = obfuscator("cpu", 1, hits)[0]
        if cuda:
            row["cuda_eager_seconds_per_iter"] = obfuscator("cuda", iters, hits)[0]
            row["cuda_graph_seconds_per_iter"] = obfuscator("cuda", iters, hits, True)[0]
        if cuda and args.obf_full:  # the whole fit: max_iter = patience = 300 (experiment)
            t0 = time.perf_counter()
            _, ob = obfuscator("cuda", 300, hits, True)
            row["cuda_graph_full_fit_seconds"] = time.perf_counter() - t0
            row["full_fit_iterations"] = ob.n_iter_
            row["full_fit_val_accuracy"] = ob.val_accuracy_
            row["full_fit_graph"] = ob.cuda_graph_
        out["gowalla_obfuscator"] = row
        print("obfuscator", row, flush=True)
    if "c" in args.only:
        from privwatch.estimators import ClassifierLift

        takes = "device" in inspect.signature(ClassifierLift.__init__).parameters
        out["classifier_lift"] = "measured in (g)" if takes else "not measured: no device= argument"
        print("classifier lift", out["classifier_lift"], flush=True)
    if "d" in args.only:
        epochs = 2 if args.quick else 60
        row = {"epochs": epochs, "cpu_seconds_per_point": digits_point("cpu", epochs)}
        if cuda:
            digits_point("cuda", 1)
            row["cuda_eager_seconds_per_point"] = digits_point("cuda", epochs)
        out["digits_ppan"] = row
        print("digits", row, flush=True)
    for key, name, family in (
        ("e", "stacked_obfuscators", family_e),
        ("f", "digits_curve", family_f),
        ("g", "classifier_lift_stacked", family_g),
    ):
        if key in args.only:
            out[name] = family(args, cuda)
            print(name, out[name], flush=True)
    emit(out, args.out)


if __name__ == "__main__":
    main()
