"""Tiny timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def best_of(func: Callable[[], Any], repeat: int = 5) -> float:
    """Best wall time of ``repeat`` calls, in seconds (the least noisy figure on a busy box)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    return best


def machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def write(name: str, payload: dict[str, Any]) -> Path:
    out = Path(__file__).parent / "results" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"machine": machine(), **payload}, indent=2))
    return out


def emit(out: dict[str, Any], path: str | None) -> None:
    """Print a benchmark's results as JSON, and write them to ``path`` when one is given."""
    text = json.dumps(out, indent=1)
    print(text)
    if path:
        Path(path).write_text(text)
