"""Digit images: bundled 8x8 digits and MNIST IDX files (parsed without unpickling)."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from privwatch import ValidationError
from privwatch.datasets import load_digit_images


def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(struct.pack(">I", d) for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def test_bundled_digits() -> None:
    d = load_digit_images(rng=0)
    assert d.side == 8 and d.train.shape[1] == 64
    assert len(d.train) + len(d.test) == 1797
    assert d.train.min() >= 0.0 and d.train.max() <= 1.0
    assert set(np.unique(d.test_sensitive)) == set(range(10))


def test_mnist_idx_files(tmp_path) -> None:
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (5, 4, 4))
    labels = rng.integers(0, 10, 5)
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx(imgs)))
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(_idx(labels))
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(_idx(imgs[:2]))
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(_idx(labels[:2]))
    d = load_digit_images(tmp_path)
    assert d.side == 4 and d.train.shape == (5, 16) and d.test.shape == (2, 16)
    assert np.allclose(d.train[0], imgs[0].ravel() / 255.0)
    assert d.train_sensitive.tolist() == labels.tolist()
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(b"\x00\x00\x0d\x01junk")
    with pytest.raises(ValidationError, match="unsigned-byte IDX"):
        load_digit_images(tmp_path)
    with pytest.raises(ValidationError, match="must contain"):
        load_digit_images(tmp_path / "missing")
