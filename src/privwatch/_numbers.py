"""Numbers as the report and the command line write them: no float noise, 'inf' for infinity,
percentages to the precision their uncertainty allows.

Shared by the audit's release methods (their rows of figures), the report and the printer.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt", "fmt_ci", "pct", "pct_ci"]


def fmt(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` significant digits, no float noise, 'inf' for infinity."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if abs(value) < 10 ** -(digits + 1):
            return "0"
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.{digits}g}"
    return str(value)


def fmt_ci(lo: float, hi: float, digits: int = 2) -> str:
    """An interval as 'lo-hi'."""
    return f"{fmt(lo, digits)} to {fmt(hi, digits)}"


def pct(p: float, half_width: float | None = None) -> str:
    """A proportion as a percentage, with one decimal only where the uncertainty allows it."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    decimals = 1 if half_width is None or half_width < 0.01 else 0
    return f"{100 * p:.{decimals}f} %"


def pct_ci(lo: float, hi: float) -> str:
    """A 95 % interval of a proportion, to the precision its width supports."""
    decimals = 1 if hi - lo < 0.02 else 0
    return f"{100 * lo:.{decimals}f}-{100 * hi:.{decimals}f} %"
