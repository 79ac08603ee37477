"""Hsu, Asoodeh, Calmon Fig. 1-2 on COMPAS with the plug-in lift.

5,278 records (ProPublica screening filter; African-American S=0, Caucasian S=1), observed sex,
age, priors count, length of stay and decile score binned as the settings say, a 70/30 split. For
each epsilon the watchdog is fitted on the training split; utility I(X;Y) (eq. 11) is plotted
against the leakage bound gamma (Prop. 2) and against the exact lift-privacy level of the merged
release, on the training and the held-out records (tuples unseen in training are flagged). The
epsilons where gamma is infinite are named on the figure.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import bin_columns
from .. import watchdog as wd
from ..datasets import load_compas
from ..measures import lift_epsilon, log_lift, mutual_information

__all__ = ["compas_counts", "run"]


def compas_counts(frame: Any, observed: list[str], symbols: dict[str, int]) -> np.ndarray:
    """Count table ``n[s, x]`` over ``symbols`` (tuple -> column; new tuples are appended)."""
    keys = frame[observed].astype(str).agg("|".join, axis=1).to_numpy()
    for k in keys:
        symbols.setdefault(k, len(symbols))
    cols = np.array([symbols[k] for k in keys], dtype=np.intp)
    n = np.zeros((2, len(symbols)))
    np.add.at(n, (frame["race_code"].to_numpy(), cols), 1.0)
    return n


def _gamma(p_x: np.ndarray, keep: np.ndarray, eps: float) -> float:
    """Hsu et al. Prop. 2 for the released set ``keep``, on the marginal ``p_x``."""
    p_keep, p_flag = float(p_x[keep].sum()), float(p_x[~keep].sum())
    if p_flag <= 0:
        return eps
    upper = math.log((1.0 - math.exp(eps) * p_keep + math.exp(eps)) / p_flag)
    low = (1.0 - math.exp(eps) * p_keep) / p_flag
    return max(upper, math.inf if low <= 0 else -math.log(low))


def _side(p: np.ndarray, keep: np.ndarray, eps: float) -> dict[str, float]:
    """Utility (eq. 11), gamma and the release's exact leakage of the merge mechanism on ``p``."""
    k = np.diag(keep.astype(float))  # Hsu et al. eq. (9), merge: flagged -> first flagged
    if (~keep).any():
        k[~keep, np.flatnonzero(~keep)[0]] = 1.0
    p_x = p.sum(axis=0)
    released = p @ k
    return {
        "utility": mutual_information(p_x[:, None] * k),
        "gamma": _gamma(p_x, keep, eps),
        "release_lift_epsilon": lift_epsilon(released),
        "release_mi": mutual_information(released),
        "flagged_fraction": float(p_x[~keep].sum()),
    }


def _curve(train: Any, test: Any, settings: dict[str, Any]) -> tuple[list[dict[str, float]], Any]:
    obs = settings["observed"]
    symbols: dict[str, int] = {}
    n_train = compas_counts(train, obs, symbols)
    n_seen = n_train.shape[1]
    n_test = compas_counts(test, obs, symbols)
    n_train = np.pad(n_train, ((0, 0), (0, n_test.shape[1] - n_seen)))
    p_tr, p_te = n_train / n_train.sum(), n_test / n_test.sum()
    rows = []
    for eps in np.linspace(**settings["epsilons"]):
        keep = np.zeros(p_te.shape[1], dtype=bool)  # tuples unseen in training are flagged
        keep[:n_seen] = wd.partition(p_tr[:, :n_seen], float(eps))
        row = {"epsilon": float(eps)}
        row.update({f"train_{k}": v for k, v in _side(p_tr, keep, float(eps)).items()})
        row.update({f"test_{k}": v for k, v in _side(p_te, keep, float(eps)).items()})
        row["test_unseen_fraction"] = float(p_te[:, n_seen:].sum())
        rows.append(row)
    return rows, (p_tr[:, :n_seen], n_train[:, :n_seen], symbols)


def _symbols_of(frame: Any, observed: list[str], symbols: dict[str, int]) -> np.ndarray:
    """The column of ``symbols`` of each record of ``frame`` (every tuple is known)."""
    keys = frame[observed].astype(str).agg("|".join, axis=1).to_numpy()
    return np.array([symbols[k] for k in keys])


def _first_infinite(curve: dict[str, np.ndarray]) -> float | None:
    """The smallest epsilon whose training gamma is infinite (None: gamma finite throughout)."""
    infinite = curve["epsilon"][np.isinf(curve["train_gamma"])]
    return float(infinite.min()) if len(infinite) else None


def _draw_tradeoffs(
    curve: dict[str, np.ndarray], first_inf: float | None, n_rows: int, out: Path
) -> None:
    """Fig. 2: utility against gamma (train and test), and against the merged release's exact
    I(S;Y) and lift-privacy level."""
    import matplotlib.pyplot as plt

    from ..plotting import plot_tradeoff, save

    ax = plot_tradeoff(
        {
            "train": (curve["train_gamma"], curve["train_utility"]),
            "test": (curve["test_gamma"], curve["test_utility"]),
        },
        xlabel="leakage bound gamma (Hsu et al. Prop. 2), nats",
    )
    note = (
        f"gamma = inf (Prop. 2 vacuous) for every eps >= {first_inf:.2f}: those points are omitted"
        if first_inf is not None
        else "gamma finite for every eps"
    )
    ax.set_title(f"COMPAS plug-in: utility vs gamma\n{note}", fontsize=9)
    save(ax, out / "fig2_tradeoff_gamma.png")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    plot_tradeoff(
        {
            "train": (curve["train_release_mi"], curve["train_utility"]),
            "test": (curve["test_release_mi"], curve["test_utility"]),
        },
        xlabel="exact I(S;Y) of the merged release, nats",
        ax=left,
    )
    left.set_title("utility vs leakage I(S;Y)")
    n_inf = int(np.isinf(curve["test_release_lift_epsilon"]).sum())
    plot_tradeoff(
        {"train": (curve["train_release_lift_epsilon"], curve["train_utility"])},
        xlabel="exact lift-privacy level of the merged release, nats",
        ax=right,
    )
    right.set_title(f"train only: on test the level is inf for {n_inf}/{n_rows} epsilons")
    save(fig, out / "fig2_tradeoff_realized.png")


def _draw_lift_scatter(p_tr: np.ndarray, cols_tr: np.ndarray, eps: float, out: Path) -> None:
    """Fig. 1: the plug-in log-lift pair of every training record (records with -inf left out)."""
    from ..plotting import plot_lift_scatter, save

    with np.errstate(divide="ignore"):
        ll = log_lift(p_tr)[:, cols_tr].T  # one row per training record
    finite = np.isfinite(ll).all(axis=1)
    ax = plot_lift_scatter(
        ll[finite],
        epsilon=eps,
        labels=("i(S=0 African-American, x)", "i(S=1 Caucasian, x)"),
    )
    ax.set_title(
        f"COMPAS train, plug-in log-lift\n({int((~finite).sum())} records with -inf omitted)"
    )
    save(ax, out / "fig1_lift_scatter.png")


def run(settings: dict[str, Any], out: Path) -> dict[str, Any]:
    """Fit the watchdog over the epsilon grid, draw Fig. 1-2 into ``out``, return the numbers."""
    df = bin_columns(load_compas(), settings["bins"])
    order = np.random.default_rng(settings["seed"]).permutation(len(df))
    n_train = round(settings["train_fraction"] * len(df))
    train, test = df.iloc[order[:n_train]], df.iloc[order[n_train:]]
    rows, (p_tr, n_tr, symbols) = _curve(train, test, settings)
    eps_s = settings["scatter_epsilon"]
    keep_s = wd.partition(p_tr, eps_s)
    opt = wd.optimal_epsilon(p_tr, eps_s)
    curve = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    first_inf = _first_infinite(curve)
    cols_tr = _symbols_of(train, settings["observed"], symbols)
    cols_te = _symbols_of(test, settings["observed"], symbols)
    keep_ext = np.concatenate([keep_s, np.zeros(len(symbols) - len(keep_s), dtype=bool)])
    results = {
        "n_records": len(df),
        "n_train": len(train),
        "n_test": len(test),
        "n_observed_symbols_train": int(p_tr.shape[1]),
        "fraction_symbols_with_fewer_than_5_train_records": float(np.mean(n_tr.sum(axis=0) < 5)),
        "train_mutual_information_plugin": mutual_information(p_tr),
        "smallest_epsilon_with_infinite_gamma_train": first_inf,
        "best_utility_minus_gamma_epsilon": float(
            curve["epsilon"][np.argmax(curve["train_utility"] - curve["train_gamma"])]
        ),
        "at_scatter_epsilon": {
            "epsilon": eps_s,
            "train_flagged_fraction": float(np.mean(~keep_ext[cols_tr])),
            "test_flagged_fraction": float(np.mean(~keep_ext[cols_te])),
            "optimal_epsilon": opt.to_dict(),
        },
        "curve": rows,
    }
    _draw_tradeoffs(curve, first_inf, len(rows), out)
    _draw_lift_scatter(p_tr, cols_tr, eps_s, out)
    return results
