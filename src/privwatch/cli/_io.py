"""Plumbing shared by the commands: consoles, one-line errors, reading the input table."""

from __future__ import annotations

import codecs
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.console import Console

from ..datasets import COMPAS_BINS, COMPAS_OBSERVED, load_compas
from ..exceptions import ValidationError
from ..preprocessing import BinSpec, parse_bins

__all__ = [
    "DATASETS",
    "FORMATS",
    "console",
    "err_console",
    "fail",
    "load_config",
    "load_input",
    "read_table",
]

console = Console()
err_console = Console(stderr=True)

#: Bundled data sets: sensitive column, observed columns, plug-in binning preset.
DATASETS: dict[str, tuple[str, list[str], dict[str, BinSpec]]] = {
    "compas": ("race", COMPAS_OBSERVED, dict(COMPAS_BINS)),
}
#: TOML keys whose option name differs from the parameter's.
ALIASES = {"save_mechanism": "save_mechanism_to", "json": "as_json"}
FORMATS = "CSV (optionally compressed), Excel (.xlsx), Parquet or JSON Lines (.jsonl)"


def fail(message: str) -> None:
    """Print a one-line error and exit with status 2."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


def _kind(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    last = suffixes[-1] if suffixes else ""
    if last in {".parquet", ".pq"}:
        return "parquet"
    if last in {".xlsx", ".xlsm"}:
        return "excel"
    if last in {".jsonl", ".ndjson"} or suffixes[-2:-1] in ([".jsonl"], [".ndjson"]):
        return "jsonl"
    return "csv"


def read_table(path: Path, sep: str = ",", encoding: str = "utf-8") -> pd.DataFrame:
    """Read a CSV, Excel, Parquet or JSON Lines file into a DataFrame (kind from the suffix).

    ``sep`` and ``encoding`` apply to CSV (``encoding`` also to JSON Lines); a decoding failure
    names the encoding and the byte offset.
    """
    if not path.exists():
        raise ValidationError(f"DATA must be an existing file; got {str(path)!r} (not found).")
    if path.is_dir():
        raise ValidationError(f"DATA must be a file; got the directory {str(path)!r}.")
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ValidationError(
            f"--encoding must be an encoding Python knows (utf-8, latin-1, cp1252, ...); "
            f"got {encoding!r}."
        ) from None
    kind = _kind(path)
    compressed = path.suffix.lower() in {".gz", ".bz2", ".zip", ".xz", ".zst"}
    wide = encoding.lower().replace("-", "").startswith(("utf16", "utf32"))
    if kind in ("csv", "jsonl") and not compressed and not wide:
        with path.open("rb") as fh:
            head = fh.read(1 << 16)
        nul = head.find(bytes(1))
        if nul >= 0:
            raise ValidationError(
                f"DATA must be a readable CSV or Parquet file; {str(path)!r} is not text: it "
                f"holds a NUL byte at offset {nul} (a binary file, or UTF-16: pass "
                "--encoding utf-16)."
            )
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        if kind == "excel":
            return pd.read_excel(path, engine="openpyxl")
        if kind == "jsonl":
            return pd.read_json(path, lines=True, encoding=encoding)
        return pd.read_csv(path, sep=sep, encoding=encoding)
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"DATA must be a readable CSV or Parquet file in the encoding {encoding!r}; "
            f"{str(path)!r} has a byte the encoding {encoding!r} cannot decode at offset "
            f"{exc.start} ({exc.reason}): pass the file's --encoding (e.g. latin-1, cp1252)."
        ) from None
    except ImportError as exc:
        raise ValidationError(
            f"reading {str(path)!r} needs an optional package ({exc.name or exc}): "
            "pip install 'privwatch[excel]' for .xlsx."
        ) from None
    except (
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        OSError,
        ValueError,
        KeyError,
    ) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValidationError(
            f"DATA must be a readable CSV or Parquet file ({FORMATS}); got {str(path)!r} ({first})."
        ) from None


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
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValidationError(
            f"--config must be a readable TOML file; got {str(path)!r} ({exc})."
        ) from None
    table = raw.get("audit", raw) if isinstance(raw.get("audit"), dict) else raw
    table = {ALIASES.get(k.replace("-", "_"), k.replace("-", "_")): v for k, v in table.items()}
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
        return load_compas(), sensitive or default_s, cols, spec
    if data is None:
        raise ValidationError("give a DATA file or --dataset NAME.")
    if sensitive is None:
        raise ValidationError("--sensitive is required with a DATA file.")
    return read_table(data, sep=sep, encoding=encoding), sensitive, cols, parse_bins(bins or [])
