"""Figures: empirical CDFs, watchdog tradeoff curves, log-lift scatter plots (matplotlib, Agg)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

__all__ = ["plot_ecdf", "plot_lift_scatter", "plot_tradeoff", "save"]


def plot_ecdf(
    values: Mapping[str, ArrayLike], *, ax: Any = None, xlabel: str = "", cap: float | None = None
) -> Any:
    """Empirical CDF of each labelled sample; values above ``cap`` (and inf) are drawn at cap."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for label, v in values.items():
        arr = np.sort(np.asarray(v, dtype=float))
        if cap is not None:
            arr = np.minimum(arr, cap)
        ax.step(arr, np.arange(1, arr.size + 1) / arr.size, where="post", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def plot_tradeoff(
    curves: Mapping[str, tuple[ArrayLike, ArrayLike]],
    *,
    ax: Any = None,
    xlabel: str = "leakage (nats)",
    ylabel: str = "utility I(X;Y) (nats)",
    marker: str = "o",
) -> Any:
    """One line per label through the points ``(leakage, utility)``."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for label, (x, y) in curves.items():
        ax.plot(np.asarray(x, float), np.asarray(y, float), marker=marker, ms=3, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def plot_lift_scatter(
    log_lift: ArrayLike,
    *,
    epsilon: float | None = None,
    labels: Sequence[str] = ("i(s0, x)", "i(s1, x)"),
    highlight: ArrayLike | None = None,
    ax: Any = None,
) -> Any:
    """Scatter of the log-lift of each record for two sensitive values, with the epsilon square."""
    ll = np.asarray(log_lift, dtype=float)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(ll[:, 0], ll[:, 1], s=6, alpha=0.4, label="records")
    if highlight is not None:
        h = np.asarray(highlight, dtype=bool)
        ax.scatter(ll[h, 0], ll[h, 1], s=10, color="tab:green", label="high risk")
    if epsilon is not None:
        e = float(epsilon)
        ax.plot([-e, e, e, -e, -e], [-e, -e, e, e, -e], "k--", lw=1, label=f"epsilon = {e:g}")
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def save(fig_or_ax: Any, path: str | Path) -> Path:
    """Save a figure (or the figure of an axes) as PNG and close it."""
    fig = fig_or_ax.figure if hasattr(fig_or_ax, "figure") and fig_or_ax.figure else fig_or_ax
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
