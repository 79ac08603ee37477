"""The report's figures. Every record is drawn: infinite risks in a marked bar at the edge."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ..plotting import plot_tradeoff, save

__all__ = ["plot_curve", "plot_frontier", "plot_risk", "risk_counts"]


def risk_counts(risk: np.ndarray, weight: np.ndarray | None = None) -> dict[str, int]:
    """Records with a finite and with an infinite risk (they add up to N); ``weight``: how
    many records carry each risk (one each by default)."""
    r = np.asarray(risk, dtype=float)
    w = np.ones(r.size) if weight is None else np.asarray(weight, dtype=float)
    n, inf = round(float(w.sum())), round(float(w[np.isinf(r)].sum()))
    return {"n": n, "finite": n - inf, "infinite": inf}


def plot_risk(
    risk: np.ndarray,
    epsilon: float,
    path: Path,
    flagged: np.ndarray,
    weight: np.ndarray | None = None,
) -> None:
    """Histogram of every record's risk; infinite risks in a hatched bar at the right edge.

    Risk: the largest |log-lift| of the record's observed tuple over sensitive values (nats);
    infinite where some sensitive value never occurs with the tuple (two-sided lift).
    ``weight``: how many records carry each risk (an engine audit draws one risk per observed
    tuple, weighted by its count). The axis spans the finite risks and a finite ``epsilon``;
    an infinite (or NaN) ``epsilon`` gets no line, only its legend entry; no risk at all (a
    synthetic table's check scores no record) gives a figure that says so.
    """
    r = np.asarray(risk, dtype=float)
    w = np.ones(r.size) if weight is None else np.asarray(weight, dtype=float)
    counts = risk_counts(r, w)
    if r.size == 0:
        _no_risk(epsilon, path)
        return
    finite = r[np.isfinite(r)]
    eps_finite = math.isfinite(float(epsilon))
    shown = [float(finite.max())] if finite.size else [1.0]
    top = max(shown + ([float(epsilon)] if eps_finite else [])) * 1.05 + 1e-9
    edges = np.linspace(0.0, top, 41)
    width = edges[1] - edges[0]
    _, ax = plt.subplots(figsize=(7, 3.8))
    fl = np.asarray(flagged, dtype=bool)
    fin = np.isfinite(r)
    wf = w[fin]
    ax.hist(
        [finite[~fl[fin]], finite[fl[fin]]],
        bins=edges.tolist(),
        weights=[wf[~fl[fin]], wf[fl[fin]]],
        stacked=True,
        color=["tab:blue", "tab:orange"],
        label=["within epsilon", "flagged (breaks epsilon)"],
    )
    edge_x = top + 2 * width
    if counts["infinite"]:
        ax.bar(
            edge_x,
            counts["infinite"],
            width=2 * width,
            color="tab:red",
            hatch="//",
            label=f"infinite risk: {counts['infinite']:,} records",
        )
        ax.axvline(top + 0.5 * width, color="tab:red", lw=1, ls=":")
        ax.annotate(
            f"inf\n{counts['infinite']:,}",
            (edge_x, counts["infinite"]),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    if eps_finite:
        ax.axvline(epsilon, color="k", ls="--", lw=1, label=f"epsilon = {epsilon:.3g} nats")
    else:  # no line at infinity: said in the legend
        label = f"epsilon = {epsilon:.3g} nats: off the axis, no finite risk breaks it"
        ax.plot([], [], color="k", ls="--", lw=1, label=label)
    ax.set_xlim(0, edge_x + 2 * width)
    ax.set_xlabel("risk: largest |log-lift| of the record's observed values (nats)")
    ax.set_ylabel("records")
    ax.set_title(
        f"All {counts['n']:,} records: {counts['finite']:,} finite, "
        f"{counts['infinite']:,} infinite (right edge)",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(ax, path)


def _no_risk(epsilon: float, path: Path) -> None:
    """The risk figure when no record was scored (a synthetic table: its rows are not records)."""
    _, ax = plt.subplots(figsize=(7, 3.8))
    ax.text(
        0.5, 0.5, "no record risk to draw: no record was scored (a synthetic table's rows\n"
        f"are not the input's records); epsilon = {epsilon:.3g} nats", ha="center", va="center",
    )  # fmt: skip
    ax.set_axis_off()
    save(ax, path)


def plot_curve(
    curve: Any, chosen: float, epsilon: float, path: Path, estimated: bool = False
) -> None:
    """Utility against the exact privacy level of the release over the epsilon grid (an empty
    ``curve``: a figure that says the route computed none)."""
    if len(curve) == 0:
        _, ax = plt.subplots(figsize=(7, 3.8))
        ax.text(0.5, 0.5, "no tradeoff curve on this route", ha="center", va="center")
        ax.set_axis_off()
        save(ax, path)
        return
    x = curve["effective_epsilon"]
    label = "lift-privacy level of the watchdog release (nats" + (
        "; estimated with a learned estimator)" if estimated else "; exact, plug-in)"
    )
    ax = plot_tradeoff(
        {"watchdog release": (np.where(np.isfinite(x), x, np.nan), curve["utility_mi"])},
        xlabel=label,
    )
    ax.axvline(chosen, color="k", ls="--", lw=1, label=f"chosen: epsilon = {epsilon:.3g}")
    ax.set_ylabel("information kept I(X;Y) (nats)")
    ax.legend(fontsize=8)
    ax.set_title("Information kept against privacy level, over epsilon")
    save(ax, path)


def plot_frontier(
    frontier: list[dict[str, Any]], epsilon: float, kept: float, total: float, path: Path
) -> None:
    """Information kept by the searched release against epsilon (the frontier table of the
    report), with the published release marked: the same numbers as the tables."""
    pts = sorted(frontier, key=lambda p: float(p["epsilon"]))
    x = [float(p["epsilon"]) for p in pts]
    _, ax = plt.subplots(figsize=(7, 3.8))
    ax.plot(x, [float(p["information_nats"]) for p in pts], "o-", label="searched release")
    ax.plot(x, [float(p["information_global_nats"]) for p in pts], "s--", alpha=0.6,
            label="global recoding alone")  # fmt: skip
    ax.axhline(total, color="0.5", lw=1, ls=":", label=f"the input: {total:.2f} nats")
    ax.plot(
        [epsilon], [kept], "k*", ms=12, label=f"published: epsilon {epsilon:.3g}, {kept:.2f} nats"
    )
    ax.set_xlabel("epsilon (nats): the lift-privacy level each release meets in-sample")
    ax.set_ylabel("information kept (nats)")
    ax.set_ylim(0, max(total, kept) * 1.08 + 1e-9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_title("Information kept against epsilon (the frontier table)", fontsize=10)
    save(ax, path)
