"""Saved models are untrusted input: one versioned, checksummed file format for every saved
estimator and mechanism.

A file is one UTF-8 JSON document::

    {"format": "privwatch-model", "version": 1, "kind": "PluginLift",
     "state": {...},                         # JSON parameters and labels
     "state_sha256": "...",                  # SHA-256 of the canonical JSON of "state"
     "arrays": {"table": {"dtype": "float64", "shape": [4, 2], "sha256": "...",
                          "data": "<base64 of the little-endian bytes>"}, ...}}

:func:`read_model` checks, in order and before any array is built: the file size against the
memory budget, the JSON syntax, the envelope (format, version, kind, exactly these keys), the
state digest, then for every array its dtype (from a short allow-list), its shape (non-negative
ints, size within the memory budget), the length of its data and its SHA-256. Any failure raises
:class:`~privwatch.exceptions.TamperedFileError`. The caller then checks ranges and consistency
(inside :func:`reconstructing`, which turns a raw exception while rebuilding the model into the
same named error). No pickle, no code execution: JSON and raw little-endian buffers only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._memory import check_allocation, check_size
from .exceptions import MemoryBudgetError, PrivwatchError, TamperedFileError, ValidationError

__all__ = [
    "FORMAT",
    "VERSION",
    "check_array",
    "read_model",
    "reconstructing",
    "write_model",
]

FORMAT = "privwatch-model"
VERSION = 1
_DTYPES = {"float32", "float64", "int32", "int64", "uint8", "bool"}
_KEYS = {"format", "version", "kind", "state", "state_sha256", "arrays"}
_ARRAY_KEYS = {"dtype", "shape", "sha256", "data"}


def _state_digest(state: Any) -> str:
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_model(
    path: str | Path, kind: str, state: Mapping[str, Any], arrays: Mapping[str, NDArray[Any]]
) -> None:
    """Write a model file (see the module docstring), atomically: a temporary file beside
    ``path``, then renamed, and no temporary file left behind when writing fails (a folder at
    ``path``, a full disk). Arrays are stored little-endian."""
    entries = {}
    for name, value in arrays.items():
        arr = np.ascontiguousarray(value)
        if arr.dtype.name not in _DTYPES:
            raise TypeError(f"array {name!r} has dtype {arr.dtype}, not one of {sorted(_DTYPES)}")
        raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        entries[name] = {
            "dtype": arr.dtype.name,
            "shape": list(arr.shape),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "data": base64.b64encode(raw).decode("ascii"),
        }
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "state": dict(state),
        "state_sha256": _state_digest(dict(state)),
        "arrays": entries,
    }
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    try:
        tmp.write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")
        tmp.replace(p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _fail(path: Path, why: str) -> TamperedFileError:
    return TamperedFileError(f"`path` must be an intact privwatch model file; {path}: {why}.")


def _read_array(path: Path, name: str, entry: Any) -> NDArray[Any]:
    if not isinstance(entry, dict) or set(entry) != _ARRAY_KEYS:
        raise _fail(path, f"array {name!r} is not a {{dtype, shape, sha256, data}} record")
    dtype, shape, digest, data = (entry[k] for k in ("dtype", "shape", "sha256", "data"))
    if not isinstance(dtype, str) or dtype not in _DTYPES:
        raise _fail(path, f"array {name!r} has dtype {dtype!r}")
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        raise _fail(path, f"array {name!r} has shape {str(shape)[:60]}")
    if not isinstance(digest, str) or not isinstance(data, str):
        raise _fail(path, f"array {name!r} has a non-string digest or data")
    check_allocation(f"{path} array {name!r}", shape, np.dtype(dtype))
    expected = math.prod(shape) * np.dtype(dtype).itemsize
    if len(data) != 4 * math.ceil(expected / 3):
        raise _fail(path, f"array {name!r} holds {len(data)} base64 characters for {shape}")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _fail(path, f"array {name!r} is not valid base64") from None
    if len(raw) != expected or hashlib.sha256(raw).hexdigest() != digest:
        raise _fail(path, f"the SHA-256 of array {name!r} does not match")
    arr = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
    return np.asarray(arr.astype(np.dtype(dtype), copy=True))


def read_model(path: str | Path, kind: str) -> tuple[dict[str, Any], dict[str, NDArray[Any]]]:
    """``(state, arrays)`` of a model file of ``kind``, every check of the module docstring
    passed; raises :class:`TamperedFileError` (or :class:`MemoryBudgetError` for a file whose
    arrays would not fit in memory)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise ValidationError(
            f"`path` must be a readable model file; got {str(p)!r} ({exc.strerror})."
        ) from None
    check_size(f"{p} (model file)", 4 * size)  # the text, the parsed JSON and the arrays
    try:
        doc = json.loads(p.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _fail(p, f"not UTF-8 JSON ({type(exc).__name__})") from None
    if not isinstance(doc, dict) or set(doc) != _KEYS:
        keys = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise _fail(p, f"the envelope has keys {str(keys)[:80]}, not {sorted(_KEYS)}")
    if doc["format"] != FORMAT or doc["version"] != VERSION:
        raise _fail(p, f"format {doc['format']!r} version {doc['version']!r} is not supported")
    if doc["kind"] != kind:
        raise _fail(p, f"it holds a saved {str(doc['kind'])[:40]!r}, not a {kind}")
    state, arrays = doc["state"], doc["arrays"]
    if not isinstance(state, dict) or not isinstance(arrays, dict):
        raise _fail(p, "state and arrays must be JSON objects")
    try:
        digest = _state_digest(state)
    except ValueError:
        raise _fail(p, "the state holds non-finite numbers") from None
    if digest != doc["state_sha256"]:
        raise _fail(p, "the SHA-256 of the state does not match")
    return state, {name: _read_array(p, name, entry) for name, entry in arrays.items()}


@contextmanager
def reconstructing(path: str | Path) -> Iterator[None]:
    """Turn a raw exception raised while rebuilding a model from a checked file (a missing key,
    a wrong type, an inconsistent shape) into :class:`TamperedFileError`."""
    try:
        yield
    except (TamperedFileError, MemoryBudgetError):
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, PrivwatchError) as exc:
        raise _fail(Path(path), f"{type(exc).__name__}: {str(exc)[:120]}") from None


def check_array(
    path: str | Path,
    arrays: Mapping[str, NDArray[Any]],
    name: str,
    *,
    ndim: int,
    low: float | None = None,
    allow_neg_inf: bool = False,
) -> NDArray[Any]:
    """``arrays[name]`` after checking its number of axes, that it is finite (``-inf`` allowed
    with ``allow_neg_inf``) and not below ``low``."""
    if name not in arrays:
        raise _fail(Path(path), f"array {name!r} is missing")
    arr = arrays[name]
    if arr.ndim != ndim:
        raise _fail(Path(path), f"array {name!r} has {arr.ndim} axes, not {ndim}")
    if arr.dtype.kind == "f":
        ok = np.isfinite(arr) | (allow_neg_inf & (arr == -np.inf))
        if not ok.all():
            raise _fail(Path(path), f"array {name!r} holds non-finite values")
    if low is not None and arr.size and float(arr.min()) < low:
        raise _fail(Path(path), f"array {name!r} holds values below {low}")
    return arr
