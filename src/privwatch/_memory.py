"""The memory budget: every allocation whose size comes from user input or a loaded file is
checked here *before* it happens.

The budget is ``PRIVWATCH_MAX_MEMORY`` (bytes, or a number with a ``K``/``M``/``G``/``T``
suffix, powers of 1024) when set; otherwise half of the machine's physical memory (a quarter when
the size of physical memory cannot be read, with a floor of 1 GiB).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

import numpy as np

from .exceptions import MemoryBudgetError

__all__ = [
    "BYTES_PER_QUANTILE_BIN",
    "MEMORY_ENV",
    "check_allocation",
    "check_size",
    "memory_budget",
]

#: Environment variable holding the budget.
MEMORY_ENV = "PRIVWATCH_MAX_MEMORY"

#: Memory one equal-frequency bin (``bins={"z": k}``) costs while its cut points and labels are
#: built: np.quantile's work arrays, np.unique's sorted copy and mask, an interval label (a
#: Python str, then a category). Measured ~290 bytes per bin at k = 2e6.
BYTES_PER_QUANTILE_BIN = 320

_SUFFIX = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def _physical_memory() -> int | None:
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    if pages <= 0 or size <= 0:
        return None
    return int(pages) * int(size)


def _parse(text: str) -> int:
    raw = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = raw[-1:] if raw[-1:] in _SUFFIX else ""
    number = raw[: len(raw) - len(unit)]
    try:
        value = float(number) * _SUFFIX[unit]
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise MemoryBudgetError(
            f"`{MEMORY_ENV}` must be a positive number of bytes (suffix K, M, G or T allowed); "
            f"got {text!r}."
        )
    return int(value)


def memory_budget() -> int:
    """The budget in bytes: ``PRIVWATCH_MAX_MEMORY`` or half the machine's memory."""
    text = os.environ.get(MEMORY_ENV)
    if text:
        return _parse(text)
    physical = _physical_memory()
    if physical is None:
        return 1024**3
    return physical // 2


def _human(n_bytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n_bytes < 1024 or unit == "PiB":
            return f"{n_bytes:.3g} {unit}"
        n_bytes /= 1024
    return f"{n_bytes:.3g} PiB"  # pragma: no cover


def check_allocation(name: str, shape: Iterable[int], dtype: type | np.dtype = np.float64) -> None:
    """Raise :class:`MemoryBudgetError` when an array of ``shape`` and ``dtype`` (sized from the
    argument ``name``) would exceed the budget; the message says how much it would take.

    Python integers are multiplied exactly, so a product that would overflow int64 is caught too.
    """
    dims = [int(d) for d in shape]
    n_bytes = math.prod(dims) * np.dtype(dtype).itemsize
    check_size(name, n_bytes, shape=tuple(dims))


def check_size(name: str, n_bytes: int, *, shape: tuple[int, ...] | None = None) -> None:
    """Raise :class:`MemoryBudgetError` when ``n_bytes`` exceeds the budget."""
    budget = memory_budget()
    if n_bytes > budget:
        what = f" (an array of shape {shape})" if shape is not None else ""
        raise MemoryBudgetError(
            f"`{name}` asks for {_human(n_bytes)}{what}, more than the memory budget of "
            f"{_human(budget)}; raise {MEMORY_ENV} if the machine really has that much."
        )
