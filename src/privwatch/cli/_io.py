"""Plumbing shared by the commands: consoles, one-line errors, reading the input table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer
from rich.console import Console

from ..datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from ..exceptions import ValidationError
from ..preprocessing import BinSpec, parse_bins

__all__ = ["DATASETS", "console", "err_console", "fail", "load_input", "read_table"]

console = Console()
err_console = Console(stderr=True)

#: Bundled data sets: sensitive column, observed columns, plug-in binning preset.
DATASETS: dict[str, tuple[str, list[str], dict[str, BinSpec]]] = {
    "compas": ("race", COMPAS_OBSERVED, dict(COMPAS_BINS)),
}


def fail(message: str) -> None:
    """Print a one-line error and exit with status 2."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


def read_table(path: Path) -> pd.DataFrame:
    """Read a CSV (optionally compressed) or Parquet file into a DataFrame."""
    if not path.exists():
        raise ValidationError(f"DATA must be an existing file; got {str(path)!r} (not found).")
    if path.is_dir():
        raise ValidationError(f"DATA must be a file; got the directory {str(path)!r}.")
    try:
        if path.suffix.lower() in {".parquet", ".pq"}:
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (
        UnicodeDecodeError,
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        ImportError,
        OSError,
        ValueError,
    ) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValidationError(
            f"DATA must be a readable CSV or Parquet file; got {str(path)!r} ({first})."
        ) from None


def load_input(
    data: Path | None,
    dataset: str | None,
    sensitive: str | None,
    observed: str | None,
    bins: list[str] | None,
    *,
    preset_bins: bool = True,
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
        return load_compas(), sensitive or default_s, cols, spec
    if data is None:
        raise ValidationError("give a DATA file or --dataset NAME.")
    if sensitive is None:
        raise ValidationError("--sensitive is required with a DATA file.")
    return read_table(data), sensitive, cols, parse_bins(bins or [])
