"""Digit images for the PPAN image experiments: scikit-learn's bundled 8x8 digits, or MNIST from
local IDX files (never downloaded, never unpickled)."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .._rng import RNGLike, check_rng
from ..exceptions import ValidationError

__all__ = ["DigitImages", "load_digit_images"]


@dataclass(frozen=True)
class DigitImages:
    """Images as rows in [0, 1] (``side`` x ``side`` pixels; the observed and useful values)
    with their digit labels (the sensitive values of the PPAN image experiments) in
    ``train_sensitive`` / ``test_sensitive``."""

    train: NDArray[np.float64]
    train_sensitive: NDArray[np.int64]
    test: NDArray[np.float64]
    test_sensitive: NDArray[np.int64]
    side: int


def _read_idx(path: Path) -> NDArray[np.uint8]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValidationError(f"`mnist_dir` must hold unsigned-byte IDX files; {path} is not one.")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValidationError(f"`mnist_dir` file {path} is truncated.")
    return data.reshape(dims)


def _find(directory: Path, stem: str) -> Path:
    for name in (
        stem,
        stem + ".gz",
        stem.replace("-idx", ".idx"),
        stem.replace("-idx", ".idx") + ".gz",
    ):
        if (directory / name).exists():
            return directory / name
    raise ValidationError(f"`mnist_dir` must contain {stem}[.gz]; not found in {directory}.")


def load_digit_images(
    mnist_dir: str | Path | None = None, *, test_fraction: float = 0.25, rng: RNGLike = 0
) -> DigitImages:
    """Digit images scaled to [0, 1].

    Default: scikit-learn's bundled 8x8 digits (1,797 images), split at random with
    ``test_fraction``. With ``mnist_dir``: the four MNIST IDX files (train-images-idx3-ubyte,
    train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, optionally .gz) and
    their own 60K / 10K split.
    """
    if mnist_dir is not None:
        d = Path(mnist_dir)
        parts = [
            _read_idx(_find(d, s))
            for s in (
                "train-images-idx3-ubyte",
                "train-labels-idx1-ubyte",
                "t10k-images-idx3-ubyte",
                "t10k-labels-idx1-ubyte",
            )
        ]
        side = parts[0].shape[1]
        return DigitImages(
            parts[0].reshape(len(parts[0]), -1) / 255.0,
            parts[1].astype(np.int64),
            parts[2].reshape(len(parts[2]), -1) / 255.0,
            parts[3].astype(np.int64),
            side,
        )
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = digits.data / 16.0
    y = digits.target.astype(np.int64)
    order = check_rng(rng).permutation(len(x))
    n_test = round(test_fraction * len(x))
    te, tr = order[:n_test], order[n_test:]
    return DigitImages(x[tr], y[tr], x[te], y[te], 8)
