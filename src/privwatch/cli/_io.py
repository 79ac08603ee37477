"""Plumbing shared by the commands: consoles, one-line errors, the --config file, DATA or
--dataset resolved to a table (read by :func:`privwatch.engines.read_table`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.console import Console

from ..audit import BUNDLED, read_config
from ..engines import read_table
from ..exceptions import PrivwatchError, ValidationError
from ..preprocessing import BinSpec, parse_bins
from ._flags import to_flags
from ._signals import Terminated, sigterm_raises

__all__ = [
    "DATASETS",
    "console",
    "err_console",
    "fail",
    "load_config",
    "load_input",
]

console = Console()
err_console = Console(stderr=True)

#: Bundled data sets: sensitive column, observed columns, plug-in binning preset.
DATASETS: dict[str, tuple[str, list[str], dict[str, BinSpec]]] = {
    name: (sensitive, observed, preset)
    for name, (_, sensitive, observed, preset) in BUNDLED.items()
}
#: TOML keys whose option name differs from the parameter's.
ALIASES = {"save_mechanism": "save_mechanism_to", "json": "as_json"}


def fail(message: str, positional: Mapping[str, str] | None = None) -> None:
    """Print a one-line error (parameters named as flags: :func:`to_flags`; ``positional``: the
    command's arguments) and exit with status 2."""
    text = to_flags(message, positional)
    err_console.print(f"[bold red]error:[/] {text}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


@contextlib.contextmanager
def writes_or_leaves_nothing(
    out: Path, positional: Mapping[str, str] | None = None
) -> Iterator[None]:
    """A command that writes to the folder ``out``: within the block SIGTERM raises
    (:func:`sigterm_raises`); an interruption exits with status 130, a privwatch error or an
    I/O error with a one-line error and status 2, and either way a folder the command created
    is removed when it is empty (one it found is left as it was)."""
    created = not out.exists()

    def remove_if_empty() -> None:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()

    try:
        with sigterm_raises():
            yield
    except (Terminated, KeyboardInterrupt):
        remove_if_empty()
        raise typer.Exit(130) from None
    except (PrivwatchError, OSError) as exc:
        remove_if_empty()
        if isinstance(exc, PrivwatchError):
            fail(str(exc), positional)
        fail(f"could not write the outputs to {out}: {exc}; nothing was left there.")
    except Exception:  # a bug: its traceback is shown, and still nothing is left behind
        remove_if_empty()
        raise


def _as_cli_list(name: str, value: Any) -> list[str]:
    if isinstance(value, dict):
        return [
            f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in value.items()
        ]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def load_config(ctx: typer.Context, path: Path | None) -> dict[str, Any]:
    """The command's options, with those not given on the command line taken from a TOML file.

    Keys are the option names (``max-suppressed`` or ``max_suppressed``); the command line wins.
    ``bins`` and ``hierarchy`` may be tables (``bins = {age = 4}``) or lists of ``COL=...``.
    """
    params = dict(ctx.params)
    params.pop("config", None)
    if path is None:
        return params
    table = {ALIASES.get(k, k): v for k, v in read_config(path).items()}
    unknown = sorted(k for k in table if k not in params)
    if unknown:
        raise ValidationError(
            f"--config must use the option names of the command; got unknown {unknown} "
            f"(known: {', '.join(sorted(params))})."
        )
    for key, value in table.items():
        name = key.replace("-", "_")
        source = ctx.get_parameter_source(name)
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            continue
        if name in ("bins", "hierarchy"):
            value = _as_cli_list(name, value)
        elif name in ("observed", "sensitive") and isinstance(value, list):
            value = ",".join(map(str, value))
        elif name == "data" and isinstance(value, str) and "://" in value:
            pass  # a database URL, not a path
        elif name in ("data", "out", "save_mechanism_to") and value is not None:
            base = Path(path).parent
            value = Path(value) if Path(value).is_absolute() else base / value
        params[name] = value
    return params


def load_input(
    data: Path | None,
    dataset: str | None,
    sensitive: str | None,
    observed: str | None,
    bins: list[str] | None,
    *,
    preset_bins: bool = True,
    sep: str = ",",
    encoding: str = "utf-8",
) -> tuple[pd.DataFrame, str, list[str] | None, dict[str, BinSpec]]:
    """Resolve DATA / --dataset into (frame, sensitive column, observed columns, bin spec).

    A bundled data set brings its sensitive and observed columns and, with ``preset_bins``, its
    binning; ``--bins`` overrides it column by column.
    """
    cols = observed.split(",") if observed else None
    if dataset is not None:
        if data is not None:
            raise ValidationError("give either DATA or --dataset, not both.")
        if dataset not in DATASETS:
            raise ValidationError(f"--dataset must be one of {sorted(DATASETS)}; got {dataset!r}.")
        default_s, default_obs, preset = DATASETS[dataset]
        cols = cols or list(default_obs)
        spec: dict[str, BinSpec] = {**(preset if preset_bins else {}), **parse_bins(bins or [])}
        spec = {c: v for c, v in spec.items() if c in cols}
        return BUNDLED[dataset][0](), sensitive or default_s, cols, spec
    if data is None:
        raise ValidationError("give a DATA file or --dataset NAME.")
    if sensitive is None:
        raise ValidationError("--sensitive is required with a DATA file.")
    return read_table(data, sep=sep, encoding=encoding), sensitive, cols, parse_bins(bins or [])
