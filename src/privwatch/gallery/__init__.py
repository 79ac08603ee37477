"""The reproduced figures and tables of the five papers, as a gallery of runnable experiments.

Each experiment is a module of this package with a ``run(settings, out)`` function and a JSON
config shipped as package data (``privwatch/gallery/configs/NAME.json``). The config holds the
settings, the *paper's own numbers* (``paper``: one row per figure or table value, with the
``/``-separated path of our matching value in the results), a ``quick`` override for a short
run, and the ``noise`` within which two runs are expected to agree. :func:`reproduce` runs one
experiment and writes ``results.json`` (the paper's values beside ours) and its figures into the
folder it is given, nowhere else; it refuses to overwrite an earlier ``results.json``. The
committed record of each experiment lives in the source checkout under ``experiments/NAME/``.

From the command line: ``privwatch reproduce NAME``, or ``python -m privwatch.gallery NAME``
(:mod:`privwatch.gallery._command`).

Examples
--------
>>> "sadeghi2020_watchdog_mc" in available()
True
>>> config("sadeghi2020_watchdog_mc")["paper_ref"][:7]
'Sadeghi'
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "EXPERIMENTS",
    "Reproduction",
    "available",
    "config",
    "describe",
    "lookup",
    "reproduce",
    "side_by_side",
]

#: experiment name -> module of this package that runs it
EXPERIMENTS: dict[str, str] = {
    "sadeghi2020_watchdog_mc": "sadeghi2020_watchdog_mc",
    "sadeghi2020_settings": "sadeghi2020_settings",
    "hsu2019_compas_plugin": "hsu2019_compas_plugin",
    "hsu2019_funnel": "hsu2019_funnel",
    "hsu2019_compas": "hsu2019_compas",
    "romanelli2020_baselines": "romanelli2020_baselines",
    "romanelli2020_hits": "romanelli2020_baselines",
    "romanelli2020_obfuscation_synthetic": "romanelli2020_obfuscation",
    "romanelli2020_obfuscation_gowalla": "romanelli2020_obfuscation",
    "romanelli2020_gowalla_hits": "romanelli2020_obfuscation",
    "romanelli2020_cross_entropy": "romanelli2020_obfuscation",
    "romanelli2020_table2": "romanelli2020_obfuscation",
    "tripathy2019_symmetric_pair": "tripathy2019_symmetric_pair",
    "tripathy2019_gaussian_scalar": "tripathy2019_gaussian",
    "tripathy2019_gaussian_vector": "tripathy2019_gaussian",
    "tripathy2019_gaussian_rate_distortion": "tripathy2019_gaussian",
    "tripathy2019_gaussian_paper": "tripathy2019_gaussian",
    "tripathy2019_gaussian_vector_paper": "tripathy2019_gaussian",
    "tripathy2019_digits": "tripathy2019_digits",
    "errata": "errata",
}


def available() -> list[str]:
    """The names of the experiments, sorted."""
    return sorted(EXPERIMENTS)


def _check_name(name: str) -> str:
    if name not in EXPERIMENTS:
        raise ValueError(f"`name` must be one of {available()}; got {name!r}.")
    return name


def config(name: str) -> dict[str, Any]:
    """The shipped config of experiment ``name`` (a fresh copy)."""
    text = resources.files(__name__).joinpath("configs", f"{_check_name(name)}.json").read_text()
    cfg: dict[str, Any] = json.loads(text)
    return cfg


def describe(name: str) -> str:
    """One line: the figure or table the experiment reproduces."""
    return str(config(name)["title"])


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def lookup(results: dict[str, Any], path: str) -> Any:
    """The value at a ``/``-separated ``path`` of a results dict (keys may not contain ``/``)."""
    node: Any = results
    for key in path.split("/"):
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            raise KeyError(f"`path` {path!r} not found in the results (stopped at {key!r}).")
    return node


def side_by_side(cfg: dict[str, Any], results: dict[str, Any]) -> list[dict[str, Any]]:
    """The config's ``paper`` rows with our value filled in from ``results``."""
    rows = []
    for row in cfg.get("paper", []):
        try:
            ours = lookup(results, row["ours"]) if row.get("ours") else None
        except KeyError:  # a quick run may leave a row out
            ours = None
        rows.append({**row, "ours_path": row.get("ours"), "ours": ours})
    return rows


@dataclass(frozen=True)
class Reproduction:
    """What :func:`reproduce` did.

    Attributes
    ----------
    name : str
        The experiment.
    out : Path
        The folder everything was written to.
    results : dict
        The content of ``out / "results.json"``.
    files : list of Path
        Every file written (``results.json`` and the figures).
    """

    name: str
    out: Path
    results: dict[str, Any]
    files: list[Path] = field(default_factory=list)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    return str(obj)


def _finite(obj: Any) -> Any:
    """JSON has no inf/nan: write them as strings."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


@contextmanager
def _caller_rng_kept() -> Iterator[None]:
    """Run an experiment without touching the caller's torch random state: some experiments
    seed torch's global generator for their modules' initial weights (as the papers' scripts
    do); the caller's state is restored on exit, exception or not (``fork_rng``). No experiment
    uses NumPy's global state (each takes a seeded ``numpy.random.Generator``)."""
    try:
        import torch
    except ImportError:  # the torch-free experiments
        yield
        return
    with torch.random.fork_rng(devices=[]):
        yield


def reproduce(
    name: str,
    out: str | Path,
    *,
    quick: bool = False,
    overrides: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> Reproduction:
    """Run experiment ``name`` and write its results and figures into ``out`` only.

    Parameters
    ----------
    name : str
        One of :func:`available`.
    out : str or Path
        Output folder (created). It may not lie inside the installed ``privwatch`` package.
    quick : bool
        Apply the config's ``quick`` settings (a smaller run; the config says what it changes).
    overrides : dict, optional
        Settings merged over the config's (after ``quick``).
    overwrite : bool
        Replace an existing ``out/results.json``; by default a run refuses, so a committed record
        is never overwritten by accident.

    Returns
    -------
    Reproduction
    """
    cfg = config(name)
    out_path = Path(out).resolve()
    package = Path(__file__).resolve().parents[1]
    if out_path == package or package in out_path.parents:
        raise ValueError(f"`out` must lie outside the installed package {package}; got {out}.")
    if (out_path / "results.json").exists() and not overwrite:
        raise FileExistsError(
            f"`out` already holds a results.json ({out_path}); choose an empty folder or pass "
            "`overwrite`=True."
        )
    settings = dict(cfg["settings"])
    if quick:
        settings = _merge(settings, cfg.get("quick", {}))
    if overrides:
        settings = _merge(settings, overrides)
    out_path.mkdir(parents=True, exist_ok=True)
    before = set(out_path.iterdir())
    module = importlib.import_module(f"{__name__}.{EXPERIMENTS[name]}")
    with _caller_rng_kept():
        ours: dict[str, Any] = module.run(settings, out_path)
    results = {
        "experiment": name,
        "title": cfg["title"],
        "paper_ref": cfg["paper_ref"],
        "quick": quick,
        "settings": settings,
        "side_by_side": side_by_side(cfg, ours),
        "results": ours,
    }
    target = out_path / "results.json"
    target.write_text(json.dumps(_finite(results), indent=2, default=_json_default) + "\n")
    files = sorted((set(out_path.iterdir()) - before) | {target})
    return Reproduction(name, out_path, results, files)
