"""The bad-value catalogue and the pass rule of the API fuzzing harness (issue #19).

Every public callable is found from the ``__all__`` of privwatch and of each subpackage, so API
added later is covered without editing this file. A callable gets a *baseline* call built from
its parameter names (:data:`BASELINES`, with per-function overrides in :data:`OVERRIDES`); then
each argument in turn is replaced by every value of the catalogue.

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
    "privwatch.report",
    "privwatch.engines",
    "privwatch.gallery",
]

P = np.array([[0.1, 0.2, 0.1], [0.3, 0.1, 0.2]])
K = np.array([[0.7, 0.3], [0.2, 0.8]])
COUNTS = np.array([[3.0, 1.0], [2.0, 2.0], [1.0, 4.0]])

#: Baseline (valid) value of an argument, by argument name.
BASELINES: dict[str, Any] = {
    "p": P,
    "k": K,
    "alpha": 2.0,
    "base": 2.0,
    "atol": 1e-8,
    "counts": COUNTS,
    "p_x": np.array([0.4, 0.6]),
    "mask": np.array([True, False, True]),
    "epsilon": 0.5,
    "delta": 0.1,
    "epsilon_max": 2.0,
    "epsilons": np.array([0.1, 0.5, 1.0]),
    "p_x_size": 3,
    "keep": np.array([True, False, True]),
    "risk": np.array([0.1, 0.5, 1.2]),
    "n": 50,
    "rho": 0.5,
    "n_sensitive": 2,
    "n_observed": 3,
    "n_inputs": 2,
    "n_outputs": 3,
    "concentration": 1.0,
    "rng": 0,
    "users": np.array([0, 1, 1, 2]),
    "lat": np.array([48.85, 48.86]),
    "lon": np.array([2.35, 2.36]),
    "m": 3,
    "level": 0.9,
    "n_success": 3,
    "n_total": 10,
    "confidence_level": 0.95,
    "distortion": 0.5,
    "variances": np.array([1.0, 0.5]),
    "var_useful": 1.0,
    "scale": 1.0,
    "l": 2.0,
    "n_bootstrap": 20,
    "specs": ["age=3"],
    "spec": {"age": 3},
    "path": Path(__file__),
}

#: Per-function baselines where a name means something else there.
OVERRIDES: dict[str, dict[str, Any]] = {
    "engines.read_table": {
        "path": Path(privwatch.__file__).parent / "datasets" / "data" / "compas-two-years.csv.gz"
    },
    "theory.symmetric_pair_optimum": {"budget": 0.1, "m": 3, "p": 0.3},
    "theory.symmetric_pair_mi": {"p": 0.3, "m": 3},
    "datasets.symmetric_pair": {"n": 20, "m": 3, "p": 0.3},
    "measures.nmil": {"p_x": np.array([0.4, 0.6]), "k": K},
    "measures.t_closeness": {"counts": COUNTS},
    "mechanisms.optimal_bayes_mechanism": {
        "p": np.array([[0.3, 0.0, 0.2], [0.0, 0.5, 0.0]]),
        "distance": np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]),
        "budget": 1.0,
    },
    "mechanisms.optimal_privacy_mechanism": {
        "p": np.full((2, 2, 2), 0.125),
        "distance": np.array([[0.0, 1.0], [1.0, 0.0]]),
        "budget": 0.6,
    },
    "estimators.lift_intervals": {"counts": COUNTS.T},
    "estimators.miller_madow_mutual_information": {"counts": COUNTS.T},
    "release.wilson_interval": {},
    "release.parse_hierarchy_specs": {"specs": ["age=hierarchy.csv"]},
    "theory.gaussian_rate_distortion": {"budget": 0.5},
    "theory.gaussian_vector_useful_data": {"budget": 0.5, "rho": np.array([0.5, 0.3])},
    "theory.gaussian_useful_data": {"budget": 0.5},
    "theory.gaussian_full_data": {"budget": 0.5},
    "watchdog.record_tradeoff": {"sensitive": np.array([0, 1, 1])},
    # a tuple: any values are valid data (a list of strings would get the CLI-spec catalogue)
    "watchdog.safe_marker": {"marker": "*", "values": ("a", "*", "=3", "age=")},
    "watchdog.flagged_set_guarantee": {
        "sensitive_counts": np.array([50, 50]),
        "flagged_counts": np.array([10, 2]),
        "kept_risk": 0.3,
        "basis": "a test",
    },
    "adversarial.gaussian_mi": {
        "sensitive": np.array([[0.1], [0.5], [0.9], [1.3], [0.2], [0.7]]),
        "release": np.array([[0.3], [0.4], [1.1], [1.2], [0.0], [0.9]]),
    },
}

#: Callables the harness cannot drive from argument names alone (frames, estimator objects,
#: audit results, figures, engine sources), each with the test module that covers it; a name
#: that is no longer public fails ``test_catalogue_is_not_stale``.
NOT_DRIVEN: dict[str, str] = {
    "privwatch.bin_columns": "tests/test_preprocessing.py (data frames)",
    "preprocessing.check_discrete": "tests/test_preprocessing.py (data frames)",
    "release.classic_counts": "tests/release/test_classic_report.py (data frames)",
    "release.classic_report": "tests/release/test_classic_report.py (data frames)",
    "release.find_release": "tests/release/test_release.py (data frames)",
    "release.inference_attack": "tests/release/test_attack.py (data frames)",
    "release.bayes_attack_success": "tests/release/test_attack.py (a joint pmf, as measures)",
    "release.auto_hierarchy": "tests/release/test_release.py (data frames)",
    "release.as_text": "tests/release/test_release.py (pandas Series, via hierarchies)",
    "engines.choose_engine": "tests/engines (engine sources)",
    "engines.count_table": "tests/engines (data frames and engine sources)",
    "engines.fold_of": "tests/engines (data frames and engine sources)",
    "engines.iter_batches": "tests/engines (Parquet files)",
    "engines.parquet_files": "tests/engines/test_read_table.py (Parquet files and globs)",
    "engines.write_parquet_frames": "tests/estimators/test_stream_fit.py (iterables of frames)",
    "engines.label_records": "tests/engines (data frames and engine sources)",
    "engines.label_spark_frame": "tests/engines (Spark frames)",
    "gallery.config": "tests/test_gallery.py (experiment names)",
    "gallery.describe": "tests/test_gallery.py (experiment names)",
    "gallery.lookup": "tests/test_gallery.py (results dicts)",
    "gallery.reproduce": "tests/test_gallery.py (experiment runs)",
    "gallery.side_by_side": "tests/test_gallery.py (configs and results)",
    "estimators.posterior_log_loss": "tests/estimators (fitted estimators)",
    "estimators.bayes_error_grid": "tests/estimators (samples)",
    "estimators.grid_centres": "tests/estimators (samples)",
    "estimators.make_lift_estimator": "tests/estimators (estimator names)",
    "estimators.cross_fit_source": "tests/estimators/test_stream_crossfit.py (Parquet sources)",
    "audit.run": "tests/audit/test_one_audit.py (frames, files, globs; Spark: tests/engines)",
    "audit.plan": "tests/audit/test_one_audit.py (specs and sources)",
    "audit.prepare_table": "tests/audit (data frames, through audit.run)",
    "audit.jsonable": "tests/audit/test_one_audit.py (audits: leakage.json == to_dict())",
    "audit.make_stamp": "tests/audit/test_outputs.py (the stamp of an audited file)",
    "audit.propose_epsilon": "tests/engines/test_cli_engines.py (count tables; doctest)",
    "audit.public_source": "tests/engines/test_cli_engines.py (database URLs)",
    "report.write_audit": "tests/audit/test_one_audit.py (audits of every route)",
    "report.render_report": "tests/audit and tests/report/test_report_browser.py (audits)",
    "report.staged_files": "tests/audit/test_cli_files.py (interruptions)",
    "report.leakage_payload": "tests/audit/test_leakage_keys.py (audits)",
    "report.next_steps": "tests/audit/test_outputs.py (audits)",
    "release.load_mechanism": "tests/test_saved_files.py (saved mechanism files)",
    "release.apply_mechanism": "tests/release/test_generalisation.py (Generalisation, frames)",
    "report.check_writable": "tests/audit and tests/test_fuzz_cli.py (output folders)",
    "plotting.plot_ecdf": "tests/test_cli.py (figures)",
    "plotting.plot_lift_scatter": "tests/test_cli.py (figures)",
    "plotting.plot_tradeoff": "tests/test_cli.py (figures)",
    "plotting.save": "tests/test_cli.py (figures)",
    "datasets.load_compas": "tests/test_datasets.py (bundled files)",
    "datasets.load_digit_images": "tests/test_digits.py (bundled files)",
    "datasets.load_gowalla_paris": "tests/test_datasets.py (bundled files)",
    "datasets.synthetic_users": "tests/test_datasets.py (generator settings)",
    "adversarial.fit_many": "tests/adversarial/test_fit_many.py (estimator objects)",
    "adversarial.batch_mutual_information": "tests/adversarial (torch tensors)",
    "adversarial.hamming": "tests/adversarial (torch tensors)",
    "adversarial.pixel_cross_entropy": "tests/adversarial (torch tensors)",
    "adversarial.squared_error": "tests/adversarial (torch tensors)",
}

#: How an error message names an argument when it is not the parameter name (CLI parsers name
#: the option it parses, e.g. `bins`; the CLI maps such names to its flags).
ARG_NAMES: dict[str, dict[str, str]] = {
    "preprocessing.parse_bins": {"specs": "bins"},
    "release.parse_hierarchy_specs": {"specs": "hierarchies"},
}

HUGE = 10**13

#: Cases known to fail, by exact case id (strict xfails; the owner is named by case-id prefix
#: in ``tests/test_fuzz_api.py``'s KNOWN). Empty since 2026-11-23: keep it so.
KNOWN_FAILING: frozenset[str] = frozenset()


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
    "call_case",
    "discover",
    "driven",
    "function_cases",
    "has_nan",
    "privwatch",
    "stale_entries",
    "undriven",
]
