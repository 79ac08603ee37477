"""Tripathy, Wang, Ishwar Fig. 8-9 on digit images: hide the digit, keep the pixels.

W = Y = the image (scikit-learn's bundled 8x8 digits by default; set ``mnist_dir`` in config.json
to local MNIST IDX files), X = the digit label. Mechanism: seed noise (20 uniforms) and image ->
tanh MLP -> sigmoid image; adversary: tanh MLP -> softmax over 10 digits; distortion: mean pixel
cross entropy; the Lagrangian loss of eq. (9), with (gamma = 2) and without (gamma = 0) the
realism discriminator, over a range of lambda.

Privacy on the *test* images, three ways: the accuracy of the PPAN adversary, the accuracy of a
fresh attacker (scikit-learn MLP) trained on released training images, and the adversary's
variational estimate H(X) + E log Q(X | Z) of I(X; Z) (nats). Figures: the tradeoff (Fig. 8)
and a grid of releases over lambda (Fig. 9). The lambdas of one gamma are fitted as one stacked
program (``fit_many``; each point equals its own fit up to float rounding), so a row's
``seconds`` is its share of its curve's.

"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..adversarial import PPAN, CategoricalAdversary, SeedNoiseMechanism, fit_many
from ..adversarial import pixel_cross_entropy as pce
from ..datasets import load_digit_images


def mean_pixel_ce(y: Any, z: Any) -> Any:
    return pce(y, z) / y.shape[1]


def _fig7(
    data: Any, z_train: Any, z_test: Any, ppan_fresh: float, cfg: dict[str, Any], out: Path
) -> dict[str, Any]:
    """Fig. 7: a test '4', its PPAN release, and per-pixel random noise of the same total
    (each pixel moved by the image's mean |z - y| in a random direction, clipped to [0, 1]);
    a fresh attacker is trained on each kind of release."""
    import matplotlib.pyplot as plt
    from sklearn.neural_network import MLPClassifier

    from ..plotting import save

    rng = np.random.default_rng(cfg["seed"] + 7)

    def noisy(y: Any, z: Any) -> Any:
        m = np.abs(z - y).mean(axis=1, keepdims=True)
        return np.clip(y + m * rng.choice([-1.0, 1.0], size=y.shape), 0, 1)

    r_train, r_test = noisy(data.train, z_train), noisy(data.test, z_test)
    fresh = MLPClassifier((128,), max_iter=400, random_state=0).fit(r_train, data.train_sensitive)
    four = int(np.flatnonzero(data.test_sensitive == 4)[0])
    fig, axes = plt.subplots(1, 3, figsize=(6, 2.3))
    panels = (("test '4'", data.test[four]), ("PPAN", z_test[four]), ("random noise", r_test[four]))
    for ax, (title, img) in zip(axes, panels, strict=True):
        ax.imshow(img.reshape(data.side, data.side), cmap="gray_r", vmin=0, vmax=1)
        ax.set_title(title, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"lambda = {cfg['fig7_lambda']:g}, gamma = 0", fontsize=8)
    save(fig, out / "fig7_digit_four.png")
    return {
        "lambda": cfg["fig7_lambda"],
        "mean_abs_change_ppan": float(np.abs(z_test - data.test).mean()),
        "mean_abs_change_random": float(np.abs(r_test - data.test).mean()),
        "fresh_attacker_accuracy_ppan": ppan_fresh,
        "fresh_attacker_accuracy_random_noise": float(fresh.score(r_test, data.test_sensitive)),
    }


def run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run the experiment, draw its figures into ``out``, return the numbers; the caller's
    torch random state is restored afterwards (the networks are seeded through it)."""
    with torch.random.fork_rng():
        return _run(cfg, out)


def _ppan(cfg: dict[str, Any], n_pix: int, lam: float, gamma: float) -> PPAN:
    """The unfitted PPAN of one (lambda, gamma) point, its networks initialised from torch's
    global generator seeded with ``cfg["seed"]``: a tanh mechanism with a sigmoid output, a
    categorical adversary, and (gamma > 0) a realism discriminator."""
    torch.manual_seed(cfg["seed"])
    mech = SeedNoiseMechanism(n_pix, n_pix, hidden=cfg["hidden"], noise_dim=cfg["noise_dim"])
    mech.net = torch.nn.Sequential(
        *[torch.nn.Tanh() if isinstance(m, torch.nn.ReLU) else m for m in mech.net],
        torch.nn.Sigmoid(),
    )
    adv = CategoricalAdversary(n_pix, 10, hidden=cfg["hidden"])
    disc = None
    if gamma:
        disc = torch.nn.Sequential(
            torch.nn.Linear(n_pix, cfg["discriminator_hidden"]),
            torch.nn.Tanh(),
            torch.nn.Linear(cfg["discriminator_hidden"], 1),
            torch.nn.Sigmoid(),
        )
    return PPAN(
        mech,
        adv,
        mean_pixel_ce,
        lam=lam,
        discriminator=disc,
        gamma=gamma,
        rng=cfg["seed"],
        **cfg["ppan"],
    )


def _distortion(y: np.ndarray, z: np.ndarray) -> float:
    """Mean pixel cross entropy of the releases ``z`` of the images ``y``."""
    return float(
        np.mean(-(y * np.log(np.clip(z, 1e-6, 1)) + (1 - y) * np.log(np.clip(1 - z, 1e-6, 1))))
    )


def _curve(cfg: dict[str, Any], data: Any, gamma: float) -> tuple[list[PPAN], float]:
    """The PPANs of every lambda at ``gamma``, fitted as one stacked program (fit_many: each
    equals its own fit up to float rounding), and the seconds the curve took."""
    ppans = [_ppan(cfg, data.train.shape[1], lam, gamma) for lam in cfg["lambdas"]]
    t0 = time.perf_counter()
    fitted = fit_many(ppans, (data.train, data.train_sensitive, data.train))
    return fitted, time.perf_counter() - t0


def _point(
    ppan: PPAN, data: Any, h_x: float, seconds: float
) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """The row of numbers of one fitted (lambda, gamma) point on the test images (a fresh
    attacker trained on its releases of the training images), and those releases."""
    from sklearn.neural_network import MLPClassifier

    z_test = ppan.release(data.test, rng=1)
    z_train = ppan.release(data.train, rng=2)
    with torch.no_grad():
        logp = ppan.adversary_.log_posterior(torch.as_tensor(z_test, dtype=torch.float32))
    adv_acc = float((logp.argmax(1).numpy() == data.test_sensitive).mean())
    fresh = MLPClassifier((128,), max_iter=400, random_state=0).fit(z_train, data.train_sensitive)
    fresh_acc = float(fresh.score(z_test, data.test_sensitive))
    log_q = ppan.evaluate(data.test, data.test_sensitive, data.test)["log_likelihood"]
    row = {
        "lambda": ppan.lam,
        "distortion": _distortion(data.test, z_test),
        "adversary_accuracy": adv_acc,
        "fresh_attacker_accuracy": fresh_acc,
        "mi_estimate": max(0.0, h_x + log_q),
        "seconds": seconds,
    }
    return row, z_train, z_test


def _draw_tradeoff(
    results: dict[str, Any], cfg: dict[str, Any], majority: float, out: Path
) -> None:
    """Fig. 8: digit accuracy of the PPAN adversary and of a fresh attacker, and the variational
    I(X;Z), against the distortion, one curve per gamma."""
    import matplotlib.pyplot as plt

    from ..plotting import save

    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for gamma in cfg["gammas"]:
        rows = results[f"gamma={gamma}"]
        d = [r["distortion"] for r in rows]
        ax[0].plot(
            d,
            [r["adversary_accuracy"] for r in rows],
            "o-",
            label=f"PPAN adversary, gamma={gamma:g}",
        )
        ax[0].plot(
            d,
            [r["fresh_attacker_accuracy"] for r in rows],
            "x--",
            label=f"fresh attacker, gamma={gamma:g}",
        )
        ax[1].plot(d, [r["mi_estimate"] for r in rows], "o-", label=f"gamma={gamma:g}")
    ax[0].axhline(majority, color="grey", ls=":", label="majority guess")
    ax[0].set_xlabel("mean pixel cross entropy (test)")
    ax[0].set_ylabel("digit accuracy on releases (test)")
    ax[0].legend(fontsize=7)
    ax[1].set_xlabel("mean pixel cross entropy (test)")
    ax[1].set_ylabel("H(X) + E log Q(X|Z) (nats, test)")
    ax[1].legend(fontsize=7)
    save(fig, out / "tradeoff.png")


def _draw_releases(
    grids: dict[float, list[np.ndarray]], side: int, cfg: dict[str, Any], out: Path
) -> None:
    """Fig. 9: per gamma, the shown test images (first row) and their releases over lambda."""
    import matplotlib.pyplot as plt

    from ..plotting import save

    for gamma, rows_img in grids.items():
        n_show = len(rows_img[0])
        fig, axes = plt.subplots(len(rows_img), n_show, figsize=(1.1 * n_show, 1.1 * len(rows_img)))
        for i, imgs in enumerate(rows_img):
            for j, img in enumerate(imgs):
                axes[i, j].imshow(img.reshape(side, side), cmap="gray_r", vmin=0, vmax=1)
                axes[i, j].set_xticks([])
                axes[i, j].set_yticks([])
            label = "original" if i == 0 else f"λ={cfg['lambdas'][i - 1]:g}"
            axes[i, 0].set_ylabel(label, fontsize=7)
        fig.suptitle(f"test releases, gamma = {gamma:g}", fontsize=9)
        save(fig, out / f"releases_gamma{gamma:g}.png")


def _run(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    torch.set_num_threads(1)
    data = load_digit_images(cfg["mnist_dir"], rng=cfg["seed"])
    counts = np.bincount(data.test_sensitive, minlength=10) / len(data.test_sensitive)
    h_x = float(-(counts[counts > 0] * np.log(counts[counts > 0])).sum())
    show = np.concatenate(
        [np.flatnonzero(data.test_sensitive == d)[:1] for d in range(cfg["n_show"])]
    )
    results: dict[str, Any] = {"n_train": len(data.train), "n_test": len(data.test)}
    grids: dict[float, list[np.ndarray]] = {}
    fig7: tuple[Any, Any, float] | None = None
    for gamma in cfg["gammas"]:
        rows = []
        grids[gamma] = [data.test[show]]
        ppans, curve_seconds = _curve(cfg, data, gamma)
        for lam, ppan in zip(cfg["lambdas"], ppans, strict=True):
            row, z_train, z_test = _point(ppan, data, h_x, curve_seconds / len(ppans))
            rows.append(row)
            grids[gamma].append(z_test[show])
            if gamma == 0 and lam == cfg["fig7_lambda"]:
                fig7 = (z_train, z_test, row["fresh_attacker_accuracy"])
        results[f"gamma={gamma}"] = rows
    if fig7 is not None:
        results["fig7"] = _fig7(data, *fig7, cfg, out)
    _draw_tradeoff(results, cfg, counts.max(), out)
    _draw_releases(grids, data.side, cfg, out)
    return results
