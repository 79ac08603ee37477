"""Hsu, Asoodeh, Calmon Fig. 2 (and Fig. 1) on COMPAS with the plug-in lift.

5,278 records (ProPublica screening filter; African-American S=0 and Caucasian S=1), observed
sex, age, priors count, length of stay, decile score binned as in config.json, 70/30 split. For
each epsilon the watchdog is fitted on the training split; utility I(X;Y) (eq. 11) is plotted
against the leakage bound gamma (Prop. 2) and against the exact lift-privacy level of the merged
release, on the training records and on the held-out records (where tuples unseen in training are
flagged).

Run: python experiments/hsu2019_compas_plugin/run.py
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from privwatch import PrivacyWarning, Watchdog, bin_columns
from privwatch.datasets import load_compas
from privwatch.plotting import plot_lift_scatter, plot_tradeoff, save

HERE = Path(__file__).parent


def main() -> None:
    cfg = json.loads((HERE / "config.json").read_text())
    df = bin_columns(load_compas(), cfg["bins"])
    rng = np.random.default_rng(cfg["seed"])
    order = rng.permutation(len(df))
    n_train = round(cfg["train_fraction"] * len(df))
    train, test = df.iloc[order[:n_train]], df.iloc[order[n_train:]]
    epsilons = np.linspace(**cfg["epsilons"])
    rows = []
    warnings.simplefilter("ignore", PrivacyWarning)  # sparse cells are reported in results.json
    for eps in epsilons:
        wd = Watchdog(epsilon=float(eps)).fit(train, cfg["sensitive"], cfg["observed"])
        ev_train = wd.evaluate(train, cfg["sensitive"])
        ev_test = wd.evaluate(test, cfg["sensitive"])
        rows.append(
            {
                "epsilon": float(eps),
                "train_utility": ev_train.utility.mutual_information,
                "train_gamma": ev_train.gamma_bound,
                "train_release_lift_epsilon": ev_train.guarantee.epsilon,
                "train_release_mi": ev_train.leakage_after.mutual_information,
                "train_flagged_fraction": ev_train.guarantee.flagged_probability,
                "test_utility": ev_test.utility.mutual_information,
                "test_gamma": ev_test.gamma_bound,
                "test_release_lift_epsilon": ev_test.guarantee.epsilon,
                "test_release_mi": ev_test.leakage_after.mutual_information,
                "test_flagged_fraction": ev_test.guarantee.flagged_probability,
                "test_unseen_fraction": ev_test.n_unseen / ev_test.n_records,
            }
        )
    eps_s = cfg["scatter_epsilon"]
    wd = Watchdog(epsilon=eps_s).fit(train, cfg["sensitive"], cfg["observed"])
    scores = wd.score_samples(train)
    counts = wd.counts_.sum(axis=0)
    results = {
        "config": cfg,
        "n_records": len(df),
        "n_train": len(train),
        "n_test": len(test),
        "n_observed_symbols_train": int(wd.encoder_.n_symbols),
        "fraction_symbols_with_fewer_than_5_train_records": float(np.mean(counts < 5)),
        "train_mutual_information_plugin": wd.leakage_before_.mutual_information,
        "at_scatter_epsilon": {
            "epsilon": eps_s,
            "train_flagged_fraction": float(wd.flag(train).mean()),
            "test_flagged_fraction": float(wd.flag(test).mean()),
            "guarantee": wd.guarantee_.to_dict(),
        },
        "curve": rows,
    }
    (HERE / "results.json").write_text(json.dumps(results, indent=2))
    curve = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    ax = plot_tradeoff(
        {
            "train": (curve["train_gamma"], curve["train_utility"]),
            "test": (curve["test_gamma"], curve["test_utility"]),
        },
        xlabel="leakage bound gamma (Hsu et al. Prop. 2), nats",
    )
    ax.set_title("COMPAS plug-in: utility vs gamma (points with gamma = inf omitted)")
    save(ax, HERE / "fig2_tradeoff_gamma.png")
    import matplotlib.pyplot as plt

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
    right.set_title(f"train only: on test the level is inf for {n_inf}/{len(rows)} epsilons")
    save(fig, HERE / "fig2_tradeoff_realized.png")
    finite = np.isfinite(scores.log_lift).all(axis=1)
    ax = plot_lift_scatter(
        scores.log_lift[finite],
        epsilon=eps_s,
        labels=("i(S=0 African-American, x)", "i(S=1 Caucasian, x)"),
    )
    ax.set_title(
        f"COMPAS train, plug-in log-lift\n({int((~finite).sum())} records with -inf omitted)"
    )
    save(ax, HERE / "fig1_lift_scatter.png")
    print(json.dumps({k: v for k, v in results.items() if k != "curve"}, indent=2))


if __name__ == "__main__":
    main()
