"""The bad-value catalogue and the pass rule of the API fuzzing harness (issue #19).

Every public callable is found from the ``__all__`` of privwatch and of each subpackage, so API
added later is covered without editing this file. A callable gets a *baseline* call built from
its parameter names (:data:`BASELINES`, with per-function overrides in :data:`OVERRIDES`, both in
:mod:`tests._fuzz_tables`); then each argument in turn is replaced by every value of the
catalogue.

Pass rule: the call raises a privwatch error (subclass of ``ValueError`` or ``TypeError``) whose
message names the argument, or returns a result without NaN. A raw exception (IndexError,
KeyError, ZeroDivisionError, MemoryError, a numpy/pandas ValueError, ...), a RuntimeWarning, a
NaN in the result, or a result for a value that is invalid for every numeric argument (NaN,
complex, strings, NaN/complex entries) fails.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import re
import signal
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import privwatch
from privwatch.exceptions import PrivwatchError

from ._fuzz_tables import (
    ARG_NAMES,
    BASELINES,
    KNOWN_FAILING,
    NOT_DRIVEN,
    OVERRIDES,
)

MODULES = [
    "privwatch",
    "privwatch.measures",
    "privwatch.watchdog",
    "privwatch.mechanisms",
    "privwatch.estimators",
    "privwatch.adversarial",
    "privwatch.datasets",
    "privwatch.release",
    "privwatch.theory",
    "privwatch.preprocessing",
    "privwatch.joint",
    "privwatch.plotting",
    "privwatch.audit",
    "privwatch.check",
    "privwatch.report",
    "privwatch.engines",
    "privwatch.gallery",
]

HUGE = 10**13


def _bad_scalars() -> list[tuple[str, Any, bool]]:
    """(label, value, must_raise) for a scalar argument."""
    return [
        ("nan", float("nan"), True),
        ("inf", float("inf"), False),
        ("-inf", float("-inf"), False),
        ("negative", -1.0, False),
        ("zero", 0, False),
        ("complex", 1 + 1j, True),
        ("string", "abc", True),
        ("huge", HUGE, False),
        ("bool", True, False),
        ("list", [1.0, 2.0], True),
    ]


def _bad_arrays(base: np.ndarray) -> list[tuple[str, Any, bool]]:
    """(label, value, must_raise) for an array argument with baseline ``base``."""
    out: list[tuple[str, Any, bool]] = []
    flt = base.astype(np.float64)
    nan = flt.copy()
    nan.flat[0] = np.nan
    out.append(("nan-entry", nan, True))
    inf = flt.copy()
    inf.flat[0] = np.inf
    out.append(("inf-entry", inf, False))
    neg = flt.copy()
    neg.flat[0] = -0.1
    out.append(("negative-entry", neg, False))
    cplx = flt.astype(np.complex128)
    cplx.flat[0] += 0.5j
    out.append(("complex", cplx, True))
    out.append(("empty", np.empty((0,) * max(base.ndim, 1)), False))
    out.append(("empty-rows", np.empty((0, 3)), False))
    out.append(("wrong-shape", flt.reshape(-1) if base.ndim > 1 else flt[:, None], False))
    out.append(("extra-axis", flt[None, ...], False))
    out.append(("zeros", np.zeros_like(flt), False))
    out.append(("strings", np.full(base.shape, "a", dtype=object), True))
    out.append(("object-mixed", np.array([object()] * max(base.size, 1), dtype=object), True))
    out.append(("overflow-sum", np.full(base.shape, 1e308), False))
    out.append(("huge-counts", np.full(base.shape, 1e300), False))
    out.append(("scalar-nan", float("nan"), True))
    if base.dtype == np.bool_:
        out.append(("int-mask-2", np.full(base.shape, 2), True))
    return out


def _bad_string_lists() -> list[tuple[str, Any, bool]]:
    """(label, value, must_raise) for a list of ``name=value`` strings (CLI-style specs)."""
    return [
        ("empty-list", [], False),
        ("bare-string", "age=3", False),
        ("empty-string", [""], True),
        ("no-value", ["age="], True),
        ("no-name", ["=3"], True),
        ("no-equals", ["age"], True),
        ("nan", ["age=nan"], False),
        ("huge", [f"age={HUGE}"], False),
        ("non-string", [3], True),
        ("none", [None], True),
        ("none-list", None, True),
    ]


def _bad_paths(base: Path) -> list[tuple[str, Any, bool]]:
    """(label, value, must_raise) for a file path."""
    return [
        ("missing", base.with_name("no-such-file.csv"), True),
        ("directory", base.parent, True),
        ("empty", "", True),
        ("none", None, True),
        ("int", 3, True),
    ]


def bad_values(base: Any) -> list[tuple[str, Any, bool]]:
    if isinstance(base, np.ndarray):
        return _bad_arrays(base)
    if isinstance(base, Path):
        return _bad_paths(base)
    if isinstance(base, list) and base and all(isinstance(v, str) for v in base):
        return _bad_string_lists()
    if base is None or isinstance(base, (int, float)):
        return _bad_scalars()
    return []


def discover() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every public function of every public module, once (first module that exports it)."""
    seen: set[int] = set()
    for modname in MODULES:
        try:
            mod = importlib.import_module(modname)
        except ImportError:  # an optional extra is missing
            continue
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            if not inspect.isfunction(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            short = modname.split(".")[-1] if modname != "privwatch" else "privwatch"
            yield f"{short}.{name}", obj


def baseline_kwargs(qualname: str, fn: Callable[..., Any]) -> dict[str, Any] | None:
    """Keyword arguments of a valid call, or None when some required argument has no baseline."""
    override = OVERRIDES.get(qualname, {})
    kwargs: dict[str, Any] = {}
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if pname in override:
            kwargs[pname] = override[pname]
        elif pname in BASELINES and param.default is inspect.Parameter.empty:
            kwargs[pname] = BASELINES[pname]
        elif pname in BASELINES and isinstance(param.default, (int, float)):
            kwargs[pname] = param.default
        elif param.default is inspect.Parameter.empty:
            return None
    return kwargs


def has_nan(value: Any, depth: int = 0) -> bool:
    """Whether a result holds a NaN anywhere (floats, arrays, sequences, dataclasses, dicts)."""
    if depth > 4:
        return False
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if isinstance(value, (list, tuple)):
        return any(has_nan(v, depth + 1) for v in value[:1000])
    if isinstance(value, dict):
        return any(has_nan(v, depth + 1) for v in list(value.values())[:1000])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(has_nan(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


def names_argument(message: str, arg: str) -> bool:
    """Whether ``message`` names ``arg`` the way privwatch messages do: in backticks
    ("`epsilon` must be ...", "`bins['z']` asks for ...", "`n * m` asks for ..."), or, for a
    CLI option, as ``--option``."""
    if arg.startswith("--"):
        return arg in message
    return re.search(r"`[^`]*\b" + re.escape(arg) + r"\b[^`]*`", message) is not None


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def call_case(
    fn: Callable[..., Any], kwargs: dict[str, Any], arg: str, must_raise: bool, seconds: float = 5
) -> str | None:
    """Run one case; None if it passes, else a one-line reason."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            result = fn(**kwargs)
    except _Timeout:
        return f"no answer within {seconds:g} s"
    except (ValueError, TypeError) as exc:
        if not isinstance(exc, PrivwatchError):
            return f"raw {type(exc).__name__}: {str(exc)[:120]}"
        if not names_argument(str(exc), arg):
            return f"message does not name `{arg}`: {str(exc)[:120]}"
        return None
    except PrivwatchError as exc:
        return f"privwatch error outside ValueError/TypeError: {type(exc).__name__}"
    except Exception as exc:
        return f"raw {type(exc).__name__}: {str(exc)[:120]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    if must_raise:
        return "silently accepted an invalid value"
    if has_nan(result):
        return "NaN in the result"
    return None


def function_cases() -> list[tuple[str, Callable[..., Any], dict[str, Any], str, bool]]:
    """(case id, function, kwargs, argument, must_raise) for every driven function."""
    cases = []
    for qualname, fn in discover():
        if qualname in NOT_DRIVEN:
            continue
        base = baseline_kwargs(qualname, fn)
        if base is None:
            continue
        for arg, value in base.items():
            if arg == "rng":
                continue
            for label, bad, must_raise in bad_values(value):
                kwargs = dict(base)
                kwargs[arg] = bad
                named = ARG_NAMES.get(qualname, {}).get(arg, arg)
                cases.append((f"{qualname}[{arg}={label}]", fn, kwargs, named, must_raise))
    return cases


def stale_entries() -> list[str]:
    """Catalogue entries that no longer match the API (a renamed function or parameter would
    otherwise drop its coverage silently)."""
    public = dict(discover())
    out = [f"NOT_DRIVEN {q}: not public" for q in NOT_DRIVEN if q not in public]
    for table_name, table in (("OVERRIDES", OVERRIDES), ("ARG_NAMES", ARG_NAMES)):
        for q, params in table.items():
            if q not in public:
                out.append(f"{table_name} {q}: not public")
                continue
            names = set(inspect.signature(public[q]).parameters)
            out += [f"{table_name} {q}: no parameter {p!r}" for p in params if p not in names]
    ids = {cid for cid, *_ in function_cases()}
    out += [f"KNOWN_FAILING {cid}: no such case" for cid in sorted(KNOWN_FAILING - ids)]
    return out


def driven() -> list[tuple[str, Callable[..., Any], dict[str, Any]]]:
    """(name, function, baseline kwargs) of every driven function."""
    out = []
    for qualname, fn in discover():
        base = None if qualname in NOT_DRIVEN else baseline_kwargs(qualname, fn)
        if base is not None:
            out.append((qualname, fn, base))
    return out


def undriven() -> list[str]:
    """Public functions with no baseline (neither driven nor listed in NOT_DRIVEN)."""
    return [q for q, fn in discover() if q not in NOT_DRIVEN and baseline_kwargs(q, fn) is None]


__all__ = [
    "ARG_NAMES",
    "BASELINES",
    "KNOWN_FAILING",
    "NOT_DRIVEN",
    "OVERRIDES",
    "call_case",
    "discover",
    "driven",
    "function_cases",
    "has_nan",
    "privwatch",
    "stale_entries",
    "undriven",
]
