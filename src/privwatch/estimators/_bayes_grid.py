"""Bayes error of a location release estimated on a grid (Romanelli et al. eq. 24-26)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._encoder import factorize_sorted, joint_counts
from .._validation import check_planar_points, check_positive_int
from ..exceptions import ValidationError

__all__ = ["bayes_error_grid", "grid_centres"]


def _check_bounds(bounds: Sequence[float]) -> tuple[float, float, float, float]:
    xmin, xmax, ymin, ymax = (float(b) for b in bounds)
    if not (xmax > xmin and ymax > ymin):
        raise ValidationError(
            f"`bounds` must be (xmin, xmax, ymin, ymax) with min < max; got {tuple(bounds)!r}."
        )
    return xmin, xmax, ymin, ymax


def bayes_error_grid(
    releases: ArrayLike,
    labels: ArrayLike,
    *,
    bounds: Sequence[float],
    cells: int,
) -> float:
    r"""Bayes error of guessing the label from the grid cell of each released point.

    .. math:: P(\mathrm{cell}_i) = \frac{\#\text{hits in cell}_i}{\#\text{hits}},\quad
              P(j \mid \mathrm{cell}_i) = \frac{\#\text{hits of } j \text{ in cell}_i}
              {\#\text{hits in cell}_i},\quad
              B = 1 - \sum_i \max_j P(j \mid \mathrm{cell}_i) P(\mathrm{cell}_i)

    Romanelli et al. eq. (24)-(26). ``releases`` holds every obfuscated hit (k hits per original
    point: pass them all, with the label of their point). Points outside
    ``bounds = (xmin, xmax, ymin, ymax)`` are clamped into the border cells.

    Examples
    --------
    >>> pts = [[0.1, 0.1], [0.2, 0.2], [0.9, 0.9], [0.8, 0.85]]
    >>> bayes_error_grid(pts, [0, 1, 1, 1], bounds=(0, 1, 0, 1), cells=2)
    0.25
    """
    pts = check_planar_points(releases, "releases", unit="")
    lab = np.asarray(labels)
    if lab.shape != (len(pts),):
        raise ValidationError(
            f"`labels` must have one label per release ({len(pts)}); got shape {lab.shape}."
        )
    check_positive_int(cells, "cells")
    xmin, xmax, ymin, ymax = _check_bounds(bounds)
    ix = np.clip(((pts[:, 0] - xmin) / (xmax - xmin) * cells).astype(np.int64), 0, cells - 1)
    iy = np.clip(((pts[:, 1] - ymin) / (ymax - ymin) * cells).astype(np.int64), 0, cells - 1)
    import pandas as pd

    codes, uniques, _ = factorize_sorted(pd.Series(lab))
    counts = joint_counts(codes, ix * cells + iy, len(uniques), cells * cells)
    return float(1.0 - counts.max(axis=0).sum() / len(pts))


def grid_centres(bounds: Sequence[float], cells: int) -> NDArray[np.float64]:
    """Centres of the ``cells`` x ``cells`` grid over ``bounds = (xmin, xmax, ymin, ymax)``, in
    the cell order of :func:`bayes_error_grid` (row ``ix * cells + iy``): the candidate outputs
    of :func:`privwatch.mechanisms.optimal_bayes_mechanism` on that grid.

    >>> grid_centres((0, 2, 0, 2), 2).tolist()
    [[0.5, 0.5], [0.5, 1.5], [1.5, 0.5], [1.5, 1.5]]
    """
    check_positive_int(cells, "cells")
    xmin, xmax, ymin, ymax = _check_bounds(bounds)
    cx = xmin + (np.arange(cells) + 0.5) * (xmax - xmin) / cells
    cy = ymin + (np.arange(cells) + 0.5) * (ymax - ymin) / cells
    return np.column_stack([np.repeat(cx, cells), np.tile(cy, cells)])
