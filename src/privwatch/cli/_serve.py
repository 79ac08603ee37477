"""``privwatch serve``: the audit as a local web app and HTTP API (``privwatch.serve``, the
extra ``privwatch[serve]``); this module parses the options and gives the server the command
line's words (the ``privwatch audit ...``, ``check ...`` or ``apply ...`` line of a job,
messages in flags)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ._apply import apply_command
from ._audit import audit_command
from ._check import check_command
from ._flags import command_line, to_flags
from ._io import fail

__all__ = ["audit_line", "job_line", "serve_command"]

_COMMANDS: dict[str, Any] = {"audit": audit_command, "check": check_command, "apply": apply_command}


@functools.cache
def _params(kind: str) -> list[Any]:
    one = typer.Typer()
    one.command()(_COMMANDS[kind])
    return list(typer.main.get_command(one).params)


def _option_values(options: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in options.items():
        if key == "hierarchies":
            values["hierarchy"] = [f"{c}={p}" for c, p in value.items()]
        elif key in ("observed", "sensitive") and isinstance(value, list | tuple):
            values[key] = ",".join(map(str, value))
        else:
            values[key] = value
    return values


def audit_line(kind: str, options: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    """The ``privwatch audit ...`` line of a server's audit job (``""`` for other kinds)."""
    if kind != "audit":
        return ""
    values = {"data": source.get("name"), "dataset": source.get("dataset")}
    return command_line("audit", _params("audit"), {**values, **_option_values(options)})


def job_line(kind: str, options: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    """The ``privwatch audit ...``, ``privwatch check ...`` or ``privwatch apply ...`` line
    that reproduces a server's job, its files named as the user named them (an upload's own
    name, a server file's name)."""
    if kind == "audit":
        return audit_line(kind, options, source)
    files = ("original", "release", "control", "mechanism") if kind == "check" else (
        "mechanism", "data")  # fmt: skip
    values = {f: source.get(f"{f}_name") or source.get(f) for f in files if source.get(f)}
    return command_line(kind, _params(kind), {**_option_values(options), **values})


def serve_command(
    host: Annotated[
        str, typer.Option(help="Address to bind (any other than 127.0.0.1 needs --token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    data_dir: Annotated[Path, typer.Option(help="Folder of the jobs and uploads.")] = Path(
        "privwatch-serve"
    ),
    token: Annotated[
        str | None,
        typer.Option(envvar="PRIVWATCH_TOKEN", help="Every request must carry it (Bearer)."),
    ] = None,
    allow_root: Annotated[
        Path | None, typer.Option(help="Server-side files may be opened under this folder.")
    ] = None,
    max_upload_mb: Annotated[float, typer.Option(help="Largest upload (MiB).")] = 512.0,
    jobs: Annotated[int, typer.Option(help="Audits run at the same time.")] = 2,
) -> None:
    """Serve the audit as a web app and an HTTP API (needs the extra named serve)."""
    try:
        from ..serve import ServeConfig, serve
    except ImportError as exc:
        fail(
            escape(
                "privwatch serve needs the extra privwatch[serve] "
                f"(pip install 'privwatch[serve]'): {exc}."
            )
        )
        return
    try:
        config = ServeConfig(
            data_dir=data_dir,
            host=host,
            port=port,
            token=token,
            allow_root=allow_root,
            max_upload_mb=max_upload_mb,
            jobs=jobs,
            command_for=job_line,
            translate=to_flags,
        )
    except ValueError as exc:
        fail(str(exc))
        return
    serve(config)
