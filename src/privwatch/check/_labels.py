r"""Reading a released value against the original one: kept, generalised, suppressed or perturbed.

Tools write generalised values in their own forms; :func:`classify` reads them all against the
record's original value:

- ``*`` (or an empty / missing released value): **suppressed** in that column;
- the original value itself (as text, ``3`` and ``3.0`` alike): **kept**;
- an interval that contains the original number: **generalised**. Forms read: ARX's
  ``[20-30[`` and ``[20-30]``, half-open brackets ``[20, 30)`` (pandas, ANJANA, privwatch),
  ``(0,10]`` (R's ``cut``, sdcMicro), ranges ``20-29`` and ``20 - 29`` (closed), ``<20``,
  ``<=20``, ``>=60``, ``>60``, ``60+``;
- a set ``{a, b}`` (or ``{a;b}``) that contains the original value: **generalised**;
- any other label that is not a value of the original column (``Married-*``, ``25 - 45``,
  ``other``): **generalised**, read as a cell label whose meaning only the tool knows;
- a value of the original column other than the record's, a number other than the record's,
  an interval or a set that does not contain it: **perturbed** (what randomised response,
  noise or swapping do).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["GENERALISED", "KEPT", "PERTURBED", "STATES", "SUPPRESSED_VALUE", "classify", "parse"]

KEPT, GENERALISED, SUPPRESSED_VALUE, PERTURBED = 0, 1, 2, 3
#: Names of the states, indexed by their codes.
STATES = ("kept", "generalised", "suppressed", "perturbed")

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_BRACKET = re.compile(rf"^([\[\]\(])\s*({_NUM})\s*(?:,|;|\.\.|-|\s)\s*({_NUM})\s*([\[\]\)])$")
_RANGE = re.compile(rf"^({_NUM})\s*(?:-|\.\.|–|to)\s*({_NUM})$")
_BELOW = re.compile(rf"^(<=?|≤)\s*({_NUM})$")
_ABOVE = re.compile(rf"^(>=?|≥)\s*({_NUM})$|^({_NUM})\s*\+$")
_SET = re.compile(r"^\{(.*)\}$")

#: A parsed label: ("interval", lo, hi, lo_closed, hi_closed), ("set", members) or None.
Parsed = tuple[object, ...] | None


def parse(label: str) -> Parsed:
    """The interval or set a label stands for (None for an opaque label).

    Examples
    --------
    >>> parse("[20-30[")
    ('interval', 20.0, 30.0, True, False)
    >>> parse("20-29"), parse(">=60")[1:3]
    (('interval', 20.0, 29.0, True, True), (60.0, inf))
    >>> parse("{a, b}") == ("set", frozenset({"a", "b"})), parse("Married-*")
    (True, None)
    """
    text = label.strip()
    m = _BRACKET.match(text)
    if m:
        lo, hi = float(m.group(2)), float(m.group(3))
        return ("interval", lo, hi, m.group(1) == "[", m.group(4) == "]")
    m = _RANGE.match(text)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        if lo <= hi:
            return ("interval", lo, hi, True, True)
        return None
    m = _BELOW.match(text)
    if m:
        return ("interval", -math.inf, float(m.group(2)), False, m.group(1) != "<")
    m = _ABOVE.match(text)
    if m:
        if m.group(3) is not None:
            return ("interval", float(m.group(3)), math.inf, True, False)
        return ("interval", float(m.group(2)), math.inf, m.group(1) != ">", False)
    m = _SET.match(text)
    if m:
        parts = re.split(r"[;,]", m.group(1))
        return ("set", frozenset(p.strip() for p in parts if p.strip()))
    return None


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _inside(parsed: tuple[object, ...], value: str) -> bool | None:
    """Whether ``value`` lies in a parsed label (None: it cannot tell, a non-number)."""
    if parsed[0] == "set":
        members = parsed[1]
        assert isinstance(members, frozenset)
        return value in members or (
            _number(value) is not None
            and any(_number(v) == _number(value) for v in members if _number(v) is not None)
        )
    x = _number(value)
    if x is None:
        return None
    _, lo, hi, lo_closed, hi_closed = parsed
    assert isinstance(lo, float) and isinstance(hi, float)
    above = x >= lo if lo_closed else x > lo
    below = x <= hi if hi_closed else x < hi
    return bool(above and below)


def classify_one(value: str, label: str, domain: Collection[str]) -> int:
    """The state of one released ``label`` of an original ``value`` (module docstring);
    ``domain``: the original column's values as text."""
    text = label.strip()
    if text in ("*", ""):
        return SUPPRESSED_VALUE
    if text == value.strip():
        return KEPT
    x, y = _number(value), _number(text)
    if x is not None and y is not None:
        return KEPT if x == y else PERTURBED
    parsed = parse(text)
    if parsed is not None:
        inside = _inside(parsed, value)
        if inside is not None:
            return GENERALISED if inside else PERTURBED
    return PERTURBED if text in domain else GENERALISED


def classify(original: pd.Series, released: pd.Series) -> NDArray[np.int8]:
    """The state of every record's released value of one column (codes :data:`STATES`).

    Both series are text, aligned record by record; each distinct (original, released) pair
    is read once, so the cost grows with the pairs, not the records.

    Examples
    --------
    >>> o = pd.Series(["23", "41", "41", "a", "b"])
    >>> r = pd.Series(["[20-30[", "[20-30[", "*", "a", "a"])
    >>> [STATES[i] for i in classify(o, r)]
    ['generalised', 'perturbed', 'suppressed', 'kept', 'perturbed']
    """
    pairs = pd.MultiIndex.from_arrays([original.to_numpy(), released.to_numpy()])
    codes, uniques = pd.factorize(pairs)
    domain = set(original.unique().tolist())
    states = np.array([classify_one(v, lab, domain) for v, lab in uniques], dtype=np.int8)
    return states[np.asarray(codes)]
